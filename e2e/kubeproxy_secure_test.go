package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServiceKubeProxySecurePort (issue 14): kube-proxy (the binary through a
// kube-proxy link, the agent's own proxy off) given only a --kubeconfig that points
// at the SECURE port, with a bearer token and the server's CA to verify it (no
// --master), under ABAC that knows its user, programs a service: the cluster IP
// answers through it from the host. The same proxy with a token the server does not
// know is refused (401), and without the CA it does not trust the server; it says so.
func TestServiceKubeProxySecurePort(t *testing.T) {
	dir := t.TempDir()
	token := randomSecret(t, "kubeproxy")
	wrong := randomSecret(t, "kubeproxywrong")
	RegisterSecret(t, "kube-proxy's token", token)
	RegisterSecret(t, "a wrong token", wrong)
	c := startClusterWith(t, 1, clusterOptions{server: []string{
		// The secure port where the host reaches it (the serving certificate names
		// this machine's addresses, the bridge's among them).
		"--bind-address", "0.0.0.0",
		"--token-auth-file", writeFile(t, dir, "tokens.csv", token+",kube-proxy,1\n"),
		"--authorization-mode", "ABAC",
		"--authorization-policy-file", writeFile(t, dir, "policy.jsonl", `{"user":"kube-proxy"}`+"\n"),
	}}, "--proxy-mode=none")
	if c.s.SecureURL == "" {
		t.Fatal("no secure address in the startup log")
	}
	h := c.hosts[0]
	link := filepath.Join(t.TempDir(), "kube-proxy")
	if err := exec.Command("ln", "-s", Binary(t), link).Run(); err != nil {
		t.Fatal(err)
	}
	secure := "https://" + c.subnet + ".254:" + c.s.SecureURL[strings.LastIndex(c.s.SecureURL, ":")+1:]
	kubeconfig := func(name, tok, ca string) string {
		cluster := `{server: "` + secure + `"}`
		if ca != "" {
			cluster = `{server: "` + secure + `", certificate-authority: "` + ca + `"}`
		}
		return writeFile(t, dir, name, `apiVersion: v1
kind: Config
clusters:
- name: secure
  cluster: `+cluster+`
users:
- name: kube-proxy
  user: {token: `+tok+`}
contexts:
- name: secure
  context: {cluster: secure, user: kube-proxy}
current-context: secure
`)
	}

	pod, url := startKPWeb(t, c)
	kubeProxy := func(kc string) *Agent {
		return startProcess(t, "ip", "netns", "exec", h.name, link, "--kubeconfig="+kc, "--logtostderr=true", "--v=4",
			"--hostname-override="+h.name, "--bind-node-ip="+h.ip, "--proxy-mode=iptables")
	}

	// Refused before the right one: a token the server does not know (401), and the
	// right token without the server's CA (the certificate is verified).
	for _, bad := range []struct{ what, kubeconfig, want string }{
		{"a wrong token", kubeconfig("wrong.kubeconfig", wrong, c.s.caFile()), "failed to list *v1.Service: Unauthorized"},
		{"no CA", kubeconfig("noca.kubeconfig", token, ""), "certificate signed by unknown authority"},
	} {
		refused := kubeProxy(bad.kubeconfig)
		Eventually(t, 30*time.Second, "kube-proxy with "+bad.what+" is refused", func() error {
			if l := refused.Logs(); !strings.Contains(l, bad.want) {
				return fmt.Errorf("no %q in its log yet:\n%s", bad.want, l)
			}
			return nil
		})
		refused.Kill()
	}

	kubeProxy(kubeconfig("kube-proxy.kubeconfig", token, c.s.caFile()))
	clusterIPAnswers(t, h.name, url, pod, "the cluster IP answers through kube-proxy on the secure port", 60*time.Second)
	nat, err := exec.Command("ip", "netns", "exec", h.name, "iptables-save", "-t", "nat").CombinedOutput()
	if err != nil || !strings.Contains(string(nat), "KUBE-SVC-") {
		t.Errorf("iptables mode's tables: %v\n%s", err, nat)
	}
}

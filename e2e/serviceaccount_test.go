package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServiceAccountTokens: the server makes a default account and its token secret
// in every namespace; the token authenticates on the secure port as
// system:serviceaccount:<ns>:<name> (200 where ABAC allows it, 403 where it does not)
// and stops working once its secret is deleted (401); the ServiceAccount admission
// plugin mounts the token into pods.
func TestServiceAccountTokens(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.jsonl")
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(policy, []byte(`{"user":"admin"}`+"\n"+`{"user":"system:serviceaccount:default:default","readonly":true,"resource":"pods","namespace":"default"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte("admin-token,admin,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	RegisterSecret(t, "the admin's token", "admin-token")
	s := StartServer(t, "", "--authorization-mode", "ABAC", "--authorization-policy-file", policy, "--token-auth-file", tokens,
		"--admission-control", "NamespaceLifecycle,LimitRanger,SecurityContextDeny,ServiceAccount,ResourceQuota")
	s.RegisterKeys(t)

	// The token secret of default/default, through the API.
	var secretName string
	Eventually(t, 30*time.Second, "default/default lists its token secret", func() error {
		r := s.Kubectl("", "get", "serviceaccount", "default", "-o", "jsonpath={.secrets[0].name}")
		if r.Err != nil || r.Stdout == "" {
			return fmt.Errorf("no token secret yet: %v %s", r.Err, r.Stderr)
		}
		secretName = r.Stdout
		return nil
	})
	field := func(name, key string) string {
		t.Helper()
		out := s.MustKubectl(t, "", "get", "secret", name, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
		b, err := base64.StdEncoding.DecodeString(out)
		if err != nil {
			t.Fatalf("secret %s %s: %v", name, key, err)
		}
		return string(b)
	}
	token := field(secretName, "token")
	RegisterSecret(t, "default/default's service-account token", token)
	if strings.Count(token, ".") != 2 {
		t.Fatalf("token %q is no JWT", token)
	}
	if got := field(secretName, "namespace"); got != "default" {
		t.Errorf("namespace %q", got)
	}
	ca, err := os.ReadFile(s.caFile())
	if err != nil {
		t.Fatal(err)
	}
	if got := field(secretName, "ca.crt"); got != string(ca) {
		t.Errorf("ca.crt is not the cluster CA:\n%s", got)
	}
	if typ := s.MustKubectl(t, "", "get", "secret", secretName, "-o", "jsonpath={.type}"); typ != "kubernetes.io/service-account-token" {
		t.Errorf("type %q", typ)
	}

	caFlag := "--certificate-authority=" + s.caFile()
	// An account that may read pods only cannot read the discovery documents (as
	// with v1.0's ABAC): the admin fills kubectl's discovery cache first.
	if r := s.secureKubectl(t, caFlag, "--token", "admin-token", "get", "pods"); r.Err != nil {
		t.Fatalf("admin: %v\n%s", r.Err, r.Stderr)
	}
	t.Run("allowed: 200", func(t *testing.T) {
		r := s.secureKubectl(t, caFlag, "--token", token, "get", "pods")
		if r.Err != nil || !strings.Contains(r.Stdout+r.Stderr, "No resources found") {
			t.Fatalf("get pods with the token: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
	})
	t.Run("refused by ABAC: 403", func(t *testing.T) {
		r := s.secureKubectl(t, caFlag, "--token", token, "get", "services")
		want := `User "system:serviceaccount:default:default" cannot list resource "services"`
		if r.Err == nil || !strings.Contains(r.Stderr, "(Forbidden)") || !strings.Contains(r.Stderr, want) {
			t.Fatalf("get services with the token: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
	})
	t.Run("a pod gets the account and its token", func(t *testing.T) {
		s.MustKubectl(t, "", "run", "web", "--image", "busybox", "--restart=Never", "--", "sleep", "3600")
		out := s.MustKubectl(t, "", "get", "pod", "web", "-o",
			`jsonpath={.spec.serviceAccountName} {.spec.volumes[0].secret.secretName} {.spec.containers[0].volumeMounts[0].mountPath} {.spec.containers[0].volumeMounts[0].readOnly}`)
		if want := "default " + secretName + " /var/run/secrets/kubernetes.io/serviceaccount true"; out != want {
			t.Fatalf("pod: %q, want %q", out, want)
		}
		r := s.Kubectl("", "run", "ghost", "--image", "busybox", "--restart=Never", "--overrides", `{"apiVersion":"v1","spec":{"serviceAccountName":"ghost"}}`)
		if r.Err == nil || !strings.Contains(r.Stderr, "Missing service account default/ghost") {
			t.Fatalf("a pod of a missing account: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
	})
	t.Run("deleted secret: 401, and a new token is made", func(t *testing.T) {
		s.MustKubectl(t, "", "delete", "secret", secretName)
		r := s.secureKubectl(t, caFlag, "--token", token, "get", "pods")
		if r.Err == nil || !strings.Contains(r.Stderr, "Unauthorized") {
			t.Fatalf("get pods with the deleted token: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
		Eventually(t, 30*time.Second, "a new token secret", func() error {
			r := s.Kubectl("", "get", "serviceaccount", "default", "-o", "jsonpath={.secrets[*].name}")
			if r.Err != nil || r.Stdout == "" || r.Stdout == secretName {
				return fmt.Errorf("secrets %q: %v", r.Stdout, r.Err)
			}
			return nil
		})
	})
	t.Run("every namespace has its default account", func(t *testing.T) {
		s.MustKubectl(t, "", "create", "namespace", "team")
		Eventually(t, 30*time.Second, "team/default", func() error {
			if r := s.Kubectl("", "get", "serviceaccount", "default", "-n", "team"); r.Err != nil {
				return fmt.Errorf("%v %s", r.Err, r.Stderr)
			}
			return nil
		})
	})
	t.Run("no token in the log", func(t *testing.T) {
		if strings.Contains(s.Logs(), token) {
			t.Fatal("the server log holds the token")
		}
	})
}

// imageInCluster is the in-cluster API client (images/incluster).
const imageInCluster = "kubeactor/incluster:latest"

// TestServiceAccountInCluster: a pod on a Docker node (a host in a network namespace
// of its own, so its service proxy's rules are its own) reads its mounted token and
// CA and lists pods through https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
// (the kubernetes service, which leads to the secure port) as client-go's
// InClusterConfig does: 200 while ABAC allows its account, 401 once its token
// secret is deleted.
func TestServiceAccountInCluster(t *testing.T) {
	dir := t.TempDir()
	policy := writeFile(t, dir, "policy.jsonl", `{"user":"system:serviceaccount:default:default","readonly":true,"resource":"pods","namespace":"default"}`+"\n")
	requireDocker(t)
	if out, err := exec.Command("docker", "image", "inspect", imageInCluster).CombinedOutput(); err != nil {
		t.Fatalf("image %s missing (images/build.sh builds it): %v\n%s", imageInCluster, err, out)
	}
	c := startClusterWith(t, 1, clusterOptions{sharedMounts: true, server: []string{"--bind-address", "0.0.0.0",
		"--authorization-mode", "ABAC", "--authorization-policy-file", policy, "--admission-control", "NamespaceLifecycle,ServiceAccount"}},
		"--port", "0", "--read-only-port", "0", "--healthz-port", "0")
	s := c.s
	t.Cleanup((&dockerNode{t: t, name: c.hosts[0].name}).removeContainers)
	var secretName string
	Eventually(t, 30*time.Second, "default/default lists its token secret", func() error {
		r := s.Kubectl("", "get", "serviceaccount", "default", "-o", "jsonpath={.secrets[0].name}")
		if r.Err != nil || r.Stdout == "" {
			return fmt.Errorf("no token secret yet: %v %s", r.Err, r.Stderr)
		}
		secretName = r.Stdout
		return nil
	})
	s.MustKubectl(t, `apiVersion: v1
kind: Pod
metadata:
  name: incluster
spec:
  containers:
  - name: client
    image: `+imageInCluster+`
    imagePullPolicy: IfNotPresent
`, "create", "-f", "-")
	logs := func() string { return s.Kubectl("", "logs", "incluster").Stdout }
	Eventually(t, 90*time.Second, "the pod lists pods with its token (200)", func() error {
		if out := logs(); !strings.Contains(out, "GET /api/v1/namespaces/default/pods: 200") {
			return fmt.Errorf("pod log:\n%s", out)
		}
		return nil
	})
	s.MustKubectl(t, "", "delete", "secret", secretName)
	Eventually(t, 30*time.Second, "the deleted token is refused (401)", func() error {
		if out := logs(); !strings.Contains(out, "GET /api/v1/namespaces/default/pods: 401") {
			return fmt.Errorf("pod log:\n%s", out)
		}
		return nil
	})
	// The agent unmounts the token volume with the pod.
	uid := s.MustKubectl(t, "", "get", "pod", "incluster", "-o", "jsonpath={.metadata.uid}")
	s.MustKubectl(t, "", "delete", "pod", "incluster", "--grace-period=1")
	Eventually(t, 60*time.Second, "the token volume unmounted", func() error {
		mounts, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return err
		}
		if strings.Contains(string(mounts), uid) {
			return fmt.Errorf("a volume of pod %s is still mounted", uid)
		}
		return nil
	})
}

// TestAgentKubeconfig: the node agent's --kubeconfig (a token and the CA) takes it
// to the secure port, where ABAC lets the kubelet user in: its node registers.
func TestAgentKubeconfig(t *testing.T) {
	dir := t.TempDir()
	RegisterSecret(t, "the kubelet's token", "kubelet-token")
	s := StartServer(t, "", "--authorization-mode", "ABAC",
		"--authorization-policy-file", writeFile(t, dir, "policy.jsonl", `{"user":"kubelet"}`+"\n"),
		"--token-auth-file", writeFile(t, dir, "tokens.csv", "kubelet-token,kubelet,1\n"))
	kubeconfig := writeFile(t, dir, "kubelet.kubeconfig", `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "`+s.SecureURL+`", certificate-authority: "`+s.caFile()+`"}
users:
- name: kubelet
  user: {token: kubelet-token}
contexts:
- name: local
  context: {cluster: local, user: kubelet}
current-context: local
`)
	name := "kc" + randHex(3)
	startProcess(t, Binary(t), "agent", "--kubeconfig", kubeconfig, "--simulate", "1", "--name-prefix", name, "--node-status-update-frequency", "1s")
	Eventually(t, 30*time.Second, "node "+name+"-0 Ready", func() error {
		r := s.Kubectl("", "get", "node", name+"-0", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if r.Stdout != "True" {
			return fmt.Errorf("Ready=%q %v %s", r.Stdout, r.Err, r.Stderr)
		}
		return nil
	})
}

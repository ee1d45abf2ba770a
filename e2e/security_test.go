package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway/authz"
	"github.com/kubeactor/kubeactor/gateway/pki"
)

// The book's token and basic-auth files (§5.4.2), with tokens for the ABAC users.
const (
	bookTokenFile = `thomas,thomas,1
admin,admin,2
system,system,3
alice,alice,10
kubelet,kubelet,11
bob,bob,12
carol-ops,carol,13,ops
carol-dev,carol,13,dev
carol,carol,13
`
	bookBasicFile = "thomas,thomas,1\nadmin,admin,2\nsystem,system,3\n"
)

// startSecured starts a server with the book's token and basic-auth files and the
// book's ABAC policy, to which thomas and the system:masters group are added.
func startSecured(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	policy := authz.BookPolicy + `{"user": "thomas"}` + "\n" + `{"group": "system:masters"}` + "\n"
	// The book's tokens and passwords are mostly the users' names, which logs rightly
	// carry: what is registered is what only a secret spells (RegisterSecret skips
	// values shorter than 8 bytes).
	for what, v := range map[string]string{"carol's ops token": "carol-ops", "carol's dev token": "carol-dev",
		"thomas's basic credentials": "thomas:thomas", "admin's basic credentials": "admin:admin", "system's basic credentials": "system:system"} {
		RegisterSecret(t, what, v)
	}
	s := StartServer(t, "",
		"--token-auth-file", write("token_auth_file", bookTokenFile),
		"--basic-auth-file", write("basic_auth_file", bookBasicFile),
		"--authorization-mode", "ABAC", "--authorization-policy-file", write("policy.jsonl", policy))
	s.RegisterKeys(t)
	return s
}

// secureKubectl runs kubectl against the secure port with only the given flags.
func (s *Server) secureKubectl(t *testing.T, args ...string) Result {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty-kubeconfig")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return s.runClient("kubectl", "", append([]string{"--kubeconfig", empty, "--server", s.SecureURL}, args...))
}

func (s *Server) caFile() string { return filepath.Join(s.DataDir, "pki", "ca.crt") }

func TestSecurePortWithKubectl(t *testing.T) {
	s := startSecured(t)
	if s.SecureURL == "" {
		t.Fatal("no secure address in the startup log")
	}
	ca := "--certificate-authority=" + s.caFile()
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		want    string
	}{
		{name: "token", args: []string{ca, "--token", "thomas", "get", "nodes"}, want: "No resources found"},
		{name: "the book's basic auth (without v1.0's --api-version)", args: []string{"get", "nodes", "--username=thomas", "--password=thomas", "--insecure-skip-tls-verify=true"}, want: "No resources found"},
		{name: "wrong password", args: []string{ca, "--username=thomas", "--password=wrong", "get", "nodes"}, wantErr: true,
			want: "error: You must be logged in to the server (Unauthorized)"},
		{name: "unknown token", args: []string{ca, "--token", "nope", "get", "pods"}, wantErr: true, want: "Unauthorized"},
		{name: "bob reads pods in myNamespace", args: []string{ca, "--token", "bob", "get", "pods", "--namespace", "myNamespace"}, want: "No resources found"},
		{name: "bob may not read pods in default", args: []string{ca, "--token", "bob", "get", "pods"}, wantErr: true,
			want: `Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`},
		{name: "kubelet may not create pods", args: []string{ca, "--token", "kubelet", "run", "web", "--image", "nginx"}, wantErr: true,
			want: `User "kubelet" cannot create resource "pods" in API group "" in the namespace "default"`},
		{name: "alice may", args: []string{ca, "--token", "alice", "run", "web", "--image", "nginx"}, want: "pod/web created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.secureKubectl(t, tt.args...)
			if (r.Err != nil) != tt.wantErr {
				t.Fatalf("kubectl %v: err %v, want error %v\nstdout: %s\nstderr: %s", tt.args, r.Err, tt.wantErr, r.Stdout, r.Stderr)
			}
			if out := r.Stdout + r.Stderr; !strings.Contains(out, tt.want) {
				t.Fatalf("kubectl %v: output lacks %q:\n%s", tt.args, tt.want, out)
			}
		})
	}

	t.Run("the book's curl examples", func(t *testing.T) {
		for _, args := range [][]string{
			{s.SecureURL + "/version", "--header", "Authorization: Bearer thomas", "-k"},
			{s.SecureURL + "/version", "--basic", "-u", "thomas:thomas", "-k"},
		} {
			out, err := exec.Command("curl", append([]string{"-sS", "--fail"}, args...)...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"gitVersion"`) {
				t.Fatalf("curl %v: %v\n%s", args, err, out)
			}
		}
		// Without credentials (kubectl would prompt for a password): a 401 Status.
		out, err := exec.Command("curl", "-sS", "--cacert", s.caFile(), s.SecureURL+"/api/v1/pods").CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"code":401`) || !strings.Contains(string(out), `"kind":"Status"`) {
			t.Fatalf("curl without credentials: %v\n%s", err, out)
		}
	})

	t.Run("the book's client certificate example", func(t *testing.T) {
		dir := pki.Dir(filepath.Join(s.DataDir, "pki"))
		ca, err := dir.EnsureCA(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		certPEM, keyPEM, err := ca.Client("thomas", nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		crt, key := filepath.Join(tmp, "dd_cs_client.crt"), filepath.Join(tmp, "dd_cs_client.key")
		if os.WriteFile(crt, certPEM, 0o600) != nil || os.WriteFile(key, keyPEM, 0o600) != nil {
			t.Fatal("write client certificate")
		}
		out, err := exec.Command("curl", "-sS", "--fail", s.SecureURL+"/api/v1/nodes", "--cert", crt, "--key", key, "--cacert", s.caFile()).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"kind":"NodeList"`) {
			t.Fatalf("curl --cert: %v\n%s", err, out)
		}
		r := s.secureKubectl(t, "--certificate-authority="+s.caFile(), "--client-certificate="+crt, "--client-key="+key, "get", "nodes")
		if r.Err != nil {
			t.Fatalf("kubectl --client-certificate: %v\n%s", r.Err, r.Stderr)
		}
	})

	t.Run("the insecure port skips authentication", func(t *testing.T) {
		s.MustKubectl(t, "", "get", "pods")
	})

	t.Run("no secret in the log", func(t *testing.T) {
		logs := s.Logs()
		for _, secret := range []string{"carol-ops", "Bearer", "dGhvbWFzOnRob21hcw", "PRIVATE KEY"} {
			if strings.Contains(logs, secret) {
				t.Fatalf("the server log holds %q", secret)
			}
		}
	})
}

// TestSecurePortABACMatrix: for each row of the book policy's decision table, the
// server decides as the table says (403 when denied, anything but 401/403 when allowed).
func TestSecurePortABACMatrix(t *testing.T) {
	s := startSecured(t)
	pem, err := os.ReadFile(s.caFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	for _, c := range authz.BookMatrix {
		t.Run(c.String(), func(t *testing.T) {
			token := c.User
			if len(c.Groups) > 0 {
				token += "-" + c.Groups[0]
			}
			body := ""
			if c.Method == http.MethodPost {
				body = "{}"
			}
			req, err := http.NewRequest(c.Method, s.SecureURL+c.Path(), strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			denied := resp.StatusCode == http.StatusForbidden
			if resp.StatusCode == http.StatusUnauthorized || denied == c.Allowed {
				t.Fatalf("status %d, want allowed=%v", resp.StatusCode, c.Allowed)
			}
		})
	}
}

// TestUpWritesAdminKubeconfig: `kubeactor up` writes a kubeconfig with an admin
// client certificate, and kubectl uses it on the secure port.
func TestUpWritesAdminKubeconfig(t *testing.T) {
	s := StartUp(t, "", "--simulate", "1")
	kc := filepath.Join(s.DataDir, "pki", "admin.kubeconfig")
	Eventually(t, 30*time.Second, "admin kubeconfig written", func() error {
		_, err := os.Stat(kc)
		return err
	})
	r := s.runClient("kubectl", "", []string{"--kubeconfig", kc, "get", "nodes"})
	if r.Err != nil || !strings.Contains(r.Stdout, "NAME") {
		t.Fatalf("kubectl --kubeconfig %s get nodes: %v\n%s%s", kc, r.Err, r.Stdout, r.Stderr)
	}
}

// bookCerts are the book's openssl commands for mutual TLS (ch3-5 §8.4, 5.4.1), as
// printed, for the CA, the server and the controller manager's client certificate,
// plus two client certificates of the same CA for the ABAC checks (one with an O).
const bookCerts = `set -e
openssl genrsa -out dd_ca.key 2048
openssl req -x509 -new -nodes -key dd_ca.key -subj "/CN=yourdomain.com" -days 5000 -out dd_ca.crt
openssl genrsa -out dd_server.key 2048
HN=` + "`hostname`" + `
openssl req -new -key dd_server.key -subj "/CN=$HN" -out dd_server.csr
openssl x509 -req -in dd_server.csr -CA dd_ca.crt -CAkey dd_ca.key -CAcreateserial -out dd_server.crt -days 5000
openssl genrsa -out dd_cs_client.key 2048
openssl req -new -key dd_cs_client.key -subj "/CN=$HN" -out dd_cs_client.csr
openssl x509 -req -in dd_cs_client.csr -CA dd_ca.crt -CAkey dd_ca.key -CAcreateserial -out dd_cs_client.crt -days 5000
for who in "stranger:/CN=stranger" "dev:/CN=dev1/O=devs"; do
  f=${who%%:*}; openssl genrsa -out $f.key 2048
  openssl req -new -key $f.key -subj "${who#*:}" -out $f.csr
  openssl x509 -req -in $f.csr -CA dd_ca.crt -CAkey dd_ca.key -CAcreateserial -out $f.crt -days 5000
done
# Today's Go clients (kubectl) ignore a server certificate's CN: the same key with the name as a SAN.
openssl req -new -key dd_server.key -subj "/CN=$HN" -addext "subjectAltName=DNS:$HN" -out san.csr
openssl x509 -req -in san.csr -CA dd_ca.crt -CAkey dd_ca.key -CAcreateserial -copy_extensions copy -out san_server.crt -days 5000
`

// TestBookMutualTLS (issue 14): the book's mutual TLS setup (5.4.1) works as printed:
// certificates made with the book's openssl commands, given to the server with
// --client_ca_file, --tls-private-key-file and --tls-cert-file, and the book's curl
// with the client certificate lists the nodes. The user is the certificate's CN and
// its groups its O (ABAC decides on them: 403 naming the user); a request without
// credentials is 401, and 200 with --anonymous-auth where the policy allows
// system:anonymous. kubectl with the book's cmkubeconfig works once the server
// certificate names the host as a SAN (Go clients ignore the CN).
func TestBookMutualTLS(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", bookCerts)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the book's openssl commands: %v\n%s", err, out)
	}
	hn, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	policy := writeFile(t, dir, "policy", `{"user":"`+hn+`"}`+"\n"+`{"group":"devs","readonly":true}`+"\n"+
		`{"user":"system:anonymous","readonly":true,"resource":"nodes"}`+"\n")
	start := func(cert string, extra ...string) *Server {
		return StartServer(t, "", append([]string{"--client_ca_file=" + p("dd_ca.crt"),
			"--tls-private-key-file=" + p("dd_server.key"), "--tls-cert-file=" + p(cert),
			"--authorization_mode=ABAC", "--authorization_policy_file=" + policy}, extra...)...)
	}
	s := start("dd_server.crt")
	port := s.SecureURL[strings.LastIndexByte(s.SecureURL, ':')+1:]
	url := "https://" + hn + ":" + port
	curl := func(client string, args ...string) string {
		t.Helper()
		base := []string{"-sS", "--resolve", hn + ":" + port + ":127.0.0.1", "--cacert", p("dd_ca.crt")}
		if client != "" {
			base = append(base, "--cert", p(client+".crt"), "--key", p(client+".key"))
		}
		out, err := exec.Command("curl", append(base, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tests := []struct {
		name, client, method, path string
		want                       []string
	}{
		{"the book's curl: CN is the user", "dd_cs_client", "GET", "/api/v1/nodes", []string{`"kind":"NodeList"`}},
		{"the user may write", "dd_cs_client", "POST", "/api/v1/namespaces/default/secrets", []string{`"kind":"Secret"`, `"name":"from-cert"`}},
		{"O is a group: devs read", "dev", "GET", "/api/v1/namespaces/default/pods", []string{`"kind":"PodList"`}},
		{"O is a group: devs do not write", "dev", "POST", "/api/v1/namespaces/default/secrets",
			[]string{`"code":403`, `User \"dev1\" cannot create resource \"secrets\"`}},
		{"another CN: 403 naming it", "stranger", "GET", "/api/v1/nodes", []string{`"code":403`, `User \"stranger\" cannot list resource \"nodes\"`}},
		{"no credentials: 401", "", "GET", "/api/v1/nodes", []string{`"code":401`, `"kind":"Status"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{url + tt.path, "-X", tt.method}
			if tt.method == "POST" {
				args = append(args, "-H", "Content-Type: application/json", "-d", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"from-cert"}}`)
			}
			out := curl(tt.client, args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Fatalf("curl %s %s as %q: no %q in\n%s", tt.method, tt.path, tt.client, w, out)
				}
			}
		})
	}

	t.Run("kubectl with the book's cmkubeconfig", func(t *testing.T) {
		s2 := start("san_server.crt", "--anonymous-auth")
		port2 := s2.SecureURL[strings.LastIndexByte(s2.SecureURL, ':')+1:]
		kc := writeFile(t, dir, "cmkubeconfig", `apiVersion: v1
kind: Config
users:
- name: controllermanager
  user:
    client-certificate: `+p("dd_cs_client.crt")+`
    client-key: `+p("dd_cs_client.key")+`
clusters:
- name: local
  cluster:
    certificate-authority: `+p("dd_ca.crt")+`
contexts:
- context:
    cluster: local
    user: controllermanager
  name: my-context
current-context: my-context
`)
		// The server listens on 127.0.0.1, which need not be what the hostname resolves to.
		r := s2.runClient("kubectl", "", []string{"--kubeconfig", kc, "--server", s2.SecureURL, "--tls-server-name", hn, "get", "nodes"})
		if r.Err != nil || !strings.Contains(r.Stdout+r.Stderr, "No resources found") {
			t.Fatalf("kubectl --kubeconfig cmkubeconfig get nodes: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
		// --anonymous-auth: no credentials is system:anonymous, whom ABAC lets read nodes only.
		out, err := exec.Command("curl", "-sS", "--cacert", p("dd_ca.crt"), "--resolve", hn+":"+port2+":127.0.0.1", "https://"+hn+":"+port2+"/api/v1/nodes").CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"kind":"NodeList"`) {
			t.Fatalf("anonymous GET nodes: %v\n%s", err, out)
		}
		out, _ = exec.Command("curl", "-sS", "--cacert", p("dd_ca.crt"), "--resolve", hn+":"+port2+":127.0.0.1", "https://"+hn+":"+port2+"/api/v1/pods").CombinedOutput()
		if !strings.Contains(string(out), `"code":403`) || !strings.Contains(string(out), `system:anonymous`) {
			t.Fatalf("anonymous GET pods: want 403 naming system:anonymous:\n%s", out)
		}
	})
}

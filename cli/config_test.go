package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfigWithSecrets has every kind of secret config view must hide.
const kubeconfigWithSecrets = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://one:8443", certificate-authority-data: "Y2EtZGF0YQ=="}
users:
- name: alice
  user: {token: "alice-token", client-key-data: "a2V5", client-certificate-data: "Y2VydA=="}
- name: bob
  user: {username: bob, password: hunter2}
contexts:
- name: first
  context: {cluster: one, user: alice, namespace: team}
current-context: first
`

// runCLI runs kubeactor with args and the kubeconfig kc, returning stdout, stderr
// and the exit code.
func runCLI(t *testing.T, kc string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append(append([]string{"kubeactor"}, args...), "--kubeconfig", kc), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestConfigCommandsGolden(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	tests := []struct {
		name   string
		start  string // initial kubeconfig, "" for none
		steps  [][]string
		golden string
	}{
		{"view redacts secrets", kubeconfigWithSecrets, [][]string{{"config", "view"}}, "config-view-redacted.golden"},
		{"view --raw", kubeconfigWithSecrets, [][]string{{"config", "view", "--raw"}}, "config-view-raw.golden"},
		{"view --minify", kubeconfigWithSecrets, [][]string{{"config", "view", "--minify"}}, "config-view-minify.golden"},
		{"the book's contexts", "", [][]string{
			{"config", "set-cluster", "kubernetes-cluster", "--server=http://192.168.1.128:8080"},
			{"config", "set-context", "ctx-dev", "--namespace=development", "--cluster=kubernetes-cluster", "--user=dev"},
			{"config", "set-context", "ctx-prod", "--namespace=production", "--cluster=kubernetes-cluster", "--user=prod"},
			{"config", "use-context", "ctx-dev"},
			{"config", "current-context"},
			{"namespace"},
			{"config", "view"},
		}, "config-book.golden"},
		{"credentials replace each other", "", [][]string{
			{"config", "set-credentials", "u", "--username=a", "--password=b"},
			{"config", "set-credentials", "u", "--token=t"},
			{"config", "set-cluster", "c", "--server=https://c", "--insecure-skip-tls-verify"},
			{"config", "set-context", "x", "--cluster=c", "--user=u"},
			{"config", "set-context", "x", "--namespace=ns"},
			{"config", "use-context", "x"},
			{"namespace", "other"},
			{"config", "view", "--raw"},
		}, "config-credentials.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := filepath.Join(t.TempDir(), "config")
			if tt.start != "" {
				if err := os.WriteFile(kc, []byte(tt.start), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var all strings.Builder
			for _, step := range tt.steps {
				out, errOut, code := runCLI(t, kc, step...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", step, code, errOut)
				}
				all.WriteString("$ " + strings.Join(step, " ") + "\n" + out)
			}
			golden(t, tt.golden, []byte(all.String()))
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	kc := filepath.Join(t.TempDir(), "config")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown context", []string{"config", "use-context", "nope"}, "error: no context exists with the name: \"nope\"\n"},
		{"no current context", []string{"config", "current-context"}, "error: current-context is not set\n"},
		{"two auth methods", []string{"config", "set-credentials", "u", "--token=t", "--username=a"}, "error: you cannot specify more than one authentication method at the same time: --token, --username/--password\n"},
		{"namespace without a context", []string{"namespace", "x"}, "error: current-context is not set; create one with 'config set-context' and 'config use-context'\n"},
		{"bad view output", []string{"config", "view", "-o", "wide"}, "error: unable to match a printer suitable for the output format \"wide\", allowed formats are: json,yaml\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, kc, tt.args...)
			if code != 1 || errOut != tt.wantErr {
				t.Fatalf("exit %d, stderr %q; want 1, %q", code, errOut, tt.wantErr)
			}
		})
	}
}

package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://one:8443", insecure-skip-tls-verify: true}
- name: two
  cluster: {server: "https://two:6443", insecure-skip-tls-verify: true}
users:
- name: alice
  user: {token: "alice-token"}
contexts:
- name: first
  context: {cluster: one, user: alice, namespace: team}
- name: second
  context: {cluster: two}
current-context: first
`

func TestClientFlagsResolution(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "absent"))
	t.Setenv("HOME", dir)
	tests := []struct {
		name                  string
		flags                 clientFlags
		host, token, user, ns string
		insecure              bool
	}{
		{"server flag alone, no kubeconfig", clientFlags{Server: "http://127.0.0.1:9"}, "http://127.0.0.1:9", "", "", "default", false},
		{"no flags, no kubeconfig: kubectl's default", clientFlags{}, "http://localhost:8080", "", "", "default", false},
		{"current context", clientFlags{Kubeconfig: kc}, "https://one:8443", "alice-token", "", "team", true},
		{"--context", clientFlags{Kubeconfig: kc, Context: "second"}, "https://two:6443", "", "", "default", true},
		{"flags beat the context", clientFlags{Kubeconfig: kc, Server: "https://s:1", Token: "t", Namespace: "n"}, "https://s:1", "t", "", "n", true},
		{"basic auth", clientFlags{Server: "https://s:1", Username: "u", Password: "p", InsecureSkipTLSVerify: true}, "https://s:1", "", "u", "default", true},
		{"credentials are not sent over plain http, as in kubectl", clientFlags{Server: "http://s:1", Token: "t"}, "http://s:1", "", "", "default", false},
		{"--cluster", clientFlags{Kubeconfig: kc, Cluster: "two", InsecureSkipTLSVerify: true}, "https://two:6443", "alice-token", "", "team", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.flags.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			ns, err := tt.flags.namespace()
			if err != nil {
				t.Fatal(err)
			}
			got := []any{cfg.Host, cfg.BearerToken, cfg.Username, ns, cfg.Insecure}
			want := []any{tt.host, tt.token, tt.user, tt.ns, tt.insecure}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("host, token, user, namespace, insecure = %v, want %v", got, want)
			}
		})
	}
}

func TestClientFlagsMissingContext(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := clientFlags{Kubeconfig: kc, Context: "nope"}
	if _, err := f.restConfig(); err == nil {
		t.Fatal("an unknown --context was accepted")
	}
}

func TestKubectlMessage(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not found", fmt.Errorf("get pods nope: %w", apierrors.NewNotFound(pods, "nope")), `Error from server (NotFound): pods "nope" not found`},
		{"already exists", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "replicationcontrollers"}, "x"), `Error from server (AlreadyExists): replicationcontrollers "x" already exists`},
		{"no reason", &apierrors.StatusError{ErrStatus: metav1.Status{Message: "boom"}}, "Error from server: boom"},
		{"unauthorized", apierrors.NewUnauthorized("bad token"), "error: You must be logged in to the server (bad token)"},
		{"refused", &url.Error{Op: "Get", URL: "http://127.0.0.1:9/api/v1", Err: errors.New("dial tcp: connection refused")}, "The connection to the server 127.0.0.1:9 was refused - did you specify the right host or port?"},
		{"plain", errors.New("you must specify the type of resource to get"), "error: you must specify the type of resource to get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kubectlMessage(tt.err); got != tt.want {
				t.Fatalf("kubectlMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

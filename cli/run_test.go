package cli

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeFlags(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"dash flags unchanged", []string{"server", "--insecure-port=8080"}, []string{"server", "--insecure-port=8080"}},
		{"underscore in name", []string{"server", "--insecure_port=8080"}, []string{"server", "--insecure-port=8080"}},
		{"underscore without value", []string{"--data_dir", "/a_b"}, []string{"--data-dir", "/a_b"}},
		{"value keeps underscores", []string{"--data_dir=/var/a_b"}, []string{"--data-dir=/var/a_b"}},
		{"short flags untouched", []string{"-n", "kube_system"}, []string{"-n", "kube_system"}},
		{"after double dash untouched", []string{"exec", "--", "--keep_me"}, []string{"exec", "--", "--keep_me"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizeFlags(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("normalizeFlags(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRunReportsBadFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown command", []string{"kubeactor", "frobnicate"}, 2, "unexpected argument frobnicate"},
		{"bad port", []string{"kubeactor", "server", "--insecure_port=70000"}, 2, "--insecure-port 70000"},
		{"bad address", []string{"kubeactor", "server", "--insecure-bind-address=nowhere"}, 2, "not an IP address"},
		{"unknown admission plugin", []string{"kubeactor", "server", "--admission_control=NamespaceLifecycle,Bogus"}, 2,
			`--admission-control: admission: unknown plugin "Bogus" (known: AlwaysAdmit, AlwaysDeny, DenyExecOnPrivileged, LimitRanger, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, ResourceQuota, SecurityContextDeny, ServiceAccount)`},
		{"the book's --allow_privileged=false parses", []string{"kubeactor", "server", "--allow_privileged=false", "--insecure_port=70000"}, 2, "--insecure-port 70000"},
		{"version", []string{"kubeactor", "version"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Fatalf("stderr %q does not mention %q", errOut.String(), tt.wantErr)
			}
		})
	}
}

package config

import (
	"strings"
	"testing"
)

func TestBookArgs(t *testing.T) {
	known := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, k := range names {
				if k == n {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name      string
		component string
		args      []string
		known     []string
		want      string
		warned    string
	}{
		{"value after =", APIServer, []string{"server", "--etcd-servers=http://e:4001", "--v=0"}, []string{"v"}, "server --v=0", "--etcd-servers"},
		{"value as next argument", APIServer, []string{"server", "--etcd-servers", "http://e:4001", "--v=0"}, []string{"v"}, "server --v=0", "--etcd-servers"},
		{"bool takes no next argument", Kubelet, []string{"agent", "--containerized", "--port=1"}, []string{"port"}, "agent --port=1", "--containerized"},
		{"a real flag is never taken out", APIServer, []string{"server", "--allow-privileged=true"}, []string{"allow-privileged"}, "server --allow-privileged=true", ""},
		{"old names", APIServer, []string{"server", "--address=0.0.0.0", "--port", "8080"}, nil, "server --insecure-bind-address=0.0.0.0 --insecure-port 8080", ""},
		{"unknown flags left for the parser", APIServer, []string{"server", "--no-such-flag=1"}, nil, "server --no-such-flag=1", ""},
		{"logging flags for everyone", KubeProxy, []string{"proxy", "--log-flush-frequency", "5s"}, nil, "proxy", "--log-flush-frequency"},
		{"after -- untouched", APIServer, []string{"server", "--", "--etcd-servers=x"}, nil, "server -- --etcd-servers=x", ""},
		{"a list of API servers kept whole", Kubelet, []string{"agent", "--api-servers=http://a,http://b"}, []string{"api-servers"}, "agent --api-servers=http://a,http://b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := BookArgs(tt.component, tt.args, known(tt.known...))
			var flags []string
			for _, w := range warns {
				if w.Reason == "" {
					t.Errorf("%s: no reason", w.Flag)
				}
				flags = append(flags, w.Flag)
			}
			if strings.Join(got, " ") != tt.want || strings.Join(flags, " ") != tt.warned {
				t.Fatalf("got %q warned %q, want %q warned %q", got, flags, tt.want, tt.warned)
			}
		})
	}
}

// TestBookFlagsTable: every entry has a reason, no flag is listed twice for a
// component, and names are in the '-' spelling.
func TestBookFlagsTable(t *testing.T) {
	for _, c := range Components {
		t.Run(c, func(t *testing.T) {
			seen := map[string]bool{}
			for _, f := range BookFlags(c) {
				if f.Reason == "" || strings.Contains(f.Name, "_") || strings.HasPrefix(f.Name, "-") || seen[f.Name] {
					t.Errorf("bad entry %+v", f)
				}
				seen[f.Name] = true
			}
		})
	}
}

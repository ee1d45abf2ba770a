package cli

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway"
)

func TestPrintMembers(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	contact := now.Add(-3 * time.Second)
	list := gateway.MemberList{Kind: "MemberList", Items: []gateway.ReplicaInfo{
		{Name: "m1", PeerAddress: "127.0.0.1:2380", Role: "leader", Revision: 42, Reachable: true,
			Meta: map[string]string{gateway.MetaAPI: "http://127.0.0.1:8080", gateway.MetaSecureAPI: "https://127.0.0.1:6443"}},
		{Name: "m2", PeerAddress: "127.0.0.1:2381", Role: "follower", Revision: 41, LastContact: &contact, Reachable: true,
			Meta: map[string]string{gateway.MetaAPI: "http://127.0.0.1:8081"}},
	}}
	tests := []struct{ format, want string }{
		{"", `NAME   PEER             API                     ROLE       REVISION   LAST-CONTACT
m1     127.0.0.1:2380   http://127.0.0.1:8080   leader     42         <none>
m2     127.0.0.1:2381   http://127.0.0.1:8081   follower   41         3s ago
`},
		{"wide", `NAME   PEER             API                     ROLE       REVISION   LAST-CONTACT   SECURE-API               REACHABLE
m1     127.0.0.1:2380   http://127.0.0.1:8080   leader     42         <none>         https://127.0.0.1:6443   true
m2     127.0.0.1:2381   http://127.0.0.1:8081   follower   41         3s ago         <none>                   true
`},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := printMembers(&b, list, tc.format, now); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("format %q:\n%s\nwant\n%s", tc.format, b.String(), tc.want)
		}
	}
	var b bytes.Buffer
	if err := printMembers(&b, list, "json", now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind": "MemberList"`, `"name": "m2"`, `"role": "follower"`, `"revision": 41`, `"api": "http://127.0.0.1:8081"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("json lacks %s:\n%s", want, b.String())
		}
	}
}

// TestMembersCommand runs `kubeactor members` and `members remove` against a fake
// server given second in --server a,b: the first cannot be reached.
func TestMembersCommand(t *testing.T) {
	var removed []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/kubeactor/v1/members":
			_, _ = io.WriteString(w, `{"kind":"MemberList","items":[{"name":"m1","peerAddress":"127.0.0.1:2380","role":"leader","revision":9,"reachable":true,"meta":{"api":"http://127.0.0.1:8080"}}]}`)
		case r.Method == "DELETE" && r.URL.Path == "/kubeactor/v1/members/m3":
			removed = append(removed, "m3")
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
		case r.Method == "DELETE":
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound","message":"member \"m9\" not found"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	servers := dead + "," + srv.URL

	tests := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"members", "--server", servers}, 0, "m1     127.0.0.1:2380   http://127.0.0.1:8080   leader   9          <none>", ""},
		{[]string{"members", "-o", "json", "--server", servers}, 0, `"peerAddress": "127.0.0.1:2380"`, ""},
		{[]string{"members", "remove", "m3", "--server", servers}, 0, `member "m3" removed`, ""},
		{[]string{"members", "remove", "m9", "--server", servers}, 1, "", `member "m9" not found`},
		{[]string{"members", "-o", "yaml", "--server", servers}, 2, "", "--output"},
		{[]string{"members", "--server", dead}, 1, "", "refused"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[:len(tc.args)-2], " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"kubeactor"}, tc.args...), &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tc.code, out.String(), tc.stdout, errOut.String(), tc.stderr)
			}
		})
	}
	if strings.Join(removed, ",") != "m3" {
		t.Errorf("removed %v", removed)
	}
}

func TestServerReplicaFlagsAreUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "m1", "--initial-cluster", "m1"}, "want name=host:port"},
		{[]string{"--name", "m1", "--initial_cluster", "m1=127.0.0.1:2380,m1=127.0.0.1:2381"}, "named twice"},
		{[]string{"--name", "m4", "--initial-cluster", "m1=127.0.0.1:2380"}, "does not name this replica"},
		{[]string{"--name", "m1", "--join", "127.0.0.1:2380"}, "--join"},
		{[]string{"--name", "m1", "--peer_address", "127.0.0.1:2380"}, "--peer-address needs"},
		{[]string{"--initial-cluster-state", "bogus"}, "--initial-cluster-state"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		args := append([]string{"kubeactor", "server", "--data-dir", t.TempDir()}, tc.args...)
		if code := run(args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	utilexec "k8s.io/utils/exec"

	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/server/servertest"
)

// agentBehindAPI serves the API's pods/web/{log,exec,portforward} paths from a real
// agent server on fakes, as the gateway does.
func agentBehindAPI(t *testing.T) string {
	t.Helper()
	rt := servertest.NewRuntime(&servertest.Container{ID: "c1", Log: "a\nb\nc\n"})
	host := &servertest.Host{IDs: map[string][]string{"default/web/nginx": {"c1"}}, IPs: map[string]string{"default/web": "127.0.0.1"}}
	agent := server.New(server.Config{Runtime: rt, Host: host}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "/api/v1/namespaces/default/pods/web/"
		switch r.URL.Path {
		case base + "log":
			r.URL.Path = "/containerLogs/default/web/nginx"
		case base + "exec":
			r.URL.Path = "/exec/default/web/nginx"
		default:
			http.NotFound(w, r)
			return
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

func TestLogsCommand(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	api := agentBehindAPI(t)
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"all", []string{"logs", "web"}, "a\nb\nc\n"},
		{"tail", []string{"logs", "web", "--tail", "1"}, "c\n"},
		{"container and timestamps", []string{"logs", "web", "-c", "nginx", "--tail=1", "--timestamps"}, "2015-07-10T00:00:00.000000000Z c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, kc, append(tt.args, "-s", api)...)
			if code != 0 || out != tt.want {
				t.Fatalf("exit %d out %q err %q; want %q", code, out, errOut, tt.want)
			}
		})
	}
}

func TestExecCommand(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	api := agentBehindAPI(t)
	tests := []struct {
		name           string
		cmd            []string
		stdin          string
		stdout, stderr string
		code           int
	}{
		{"echo", []string{"echo", "hi"}, "", "hi\n", "", 0},
		{"stderr", []string{"warn", "w"}, "", "", "w\n", 0},
		{"stdin", []string{"cat"}, "in\n", "in\n", "", 0},
		{"exit code", []string{"exit", "7"}, "", "", "exiting with 7\n", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(kc, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			c := &execCmd{clientFlags: clientFlags{Server: api, Kubeconfig: kc}, Pod: "web",
				Stdin: tt.stdin != "", Command: append([]string{"--"}, tt.cmd...)}
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := c.run(ctx, strings.NewReader(tt.stdin), &out, &errOut)
			var exit utilexec.ExitError
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("exec: %v", err)
			case tt.code != 0 && (!errors.As(err, &exit) || exit.ExitStatus() != tt.code):
				t.Fatalf("err %v, want exit %d", err, tt.code)
			}
			if out.String() != tt.stdout || errOut.String() != tt.stderr {
				t.Fatalf("stdout %q stderr %q", out.String(), errOut.String())
			}
		})
	}
}

func TestParsePortPairs(t *testing.T) {
	tests := []struct {
		in      []string
		want    []portPair
		wantErr bool
	}{
		{[]string{"8080"}, []portPair{{8080, 8080}}, false},
		{[]string{"8080:80", ":443"}, []portPair{{8080, 80}, {0, 443}}, false},
		{[]string{"x:80"}, nil, true},
		{[]string{"80:0"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, ","), func(t *testing.T) {
			got, err := parsePortPairs(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if !tt.wantErr && (len(got) != len(tt.want) || got[0] != tt.want[0] || got[len(got)-1] != tt.want[len(tt.want)-1]) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/kong"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestParseMetaArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		field     string
		resources []string
		change    metaChange
		wantErr   string
	}{
		{"set and remove", []string{"pods", "web", "env=prod", "tier-"}, "labels", []string{"pods", "web"}, metaChange{Set: map[string]string{"env": "prod"}, Remove: []string{"tier"}}, ""},
		{"type/name", []string{"rc/x", "a=b"}, "labels", []string{"rc/x"}, metaChange{Set: map[string]string{"a": "b"}}, ""},
		{"annotation values may have spaces", []string{"po", "x", "note=a b"}, "annotations", []string{"po", "x"}, metaChange{Set: map[string]string{"note": "a b"}}, ""},
		{"no change", []string{"pods", "web"}, "labels", nil, metaChange{}, "at least one label update is required"},
		{"no resource", []string{"a=b"}, "annotations", nil, metaChange{}, "one or more resources must be specified"},
		{"bad label value", []string{"po", "x", "a=b c"}, "labels", nil, metaChange{}, "invalid label spec"},
		{"bad key", []string{"po", "x", "-a=b"}, "labels", nil, metaChange{}, "invalid label spec"},
		{"set and remove one key", []string{"po", "x", "a=b", "a-"}, "labels", nil, metaChange{}, "can not both modify and remove"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ch, err := parseMetaArgs(tt.args, tt.field)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, tt.resources) || !reflect.DeepEqual(ch, tt.change) {
				t.Fatalf("got %v %+v, want %v %+v", res, ch, tt.resources, tt.change)
			}
		})
	}
}

func TestMetaChangePatch(t *testing.T) {
	current := map[string]string{"env": "prod", "tier": "db"}
	tests := []struct {
		name      string
		field     string
		change    metaChange
		overwrite bool
		want      map[string]interface{}
		wantErr   string
	}{
		{"add", "labels", metaChange{Set: map[string]string{"app": "web"}}, false, map[string]interface{}{"app": "web"}, ""},
		{"same value is no change", "labels", metaChange{Set: map[string]string{"env": "prod"}}, false, nil, ""},
		{"changing needs --overwrite", "labels", metaChange{Set: map[string]string{"env": "dev"}}, false, nil, "'env' already has a value (prod), and --overwrite is false"},
		{"annotations say it kubectl's way", "annotations", metaChange{Set: map[string]string{"env": "dev", "tier": "x"}}, false, nil, "--overwrite is false but found the following declared annotation(s): 'env' already has a value (prod); 'tier' already has a value (db)"},
		{"overwrite", "labels", metaChange{Set: map[string]string{"env": "dev"}}, true, map[string]interface{}{"env": "dev"}, ""},
		{"remove is null", "labels", metaChange{Remove: []string{"tier", "absent"}}, false, map[string]interface{}{"tier": nil}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.change.patch(tt.field, current, tt.overwrite)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("patch = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestReorder(t *testing.T) {
	parser, err := kong.New(&root{})
	if err != nil {
		t.Fatal(err)
	}
	takes, passthrough := flagArity(parser.Model), passthroughAt(parser.Model)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flags before the command", []string{"-s", "http://h:8080", "--namespace=kube-system", "get", "pods"}, []string{"get", "pods", "-s", "http://h:8080", "--namespace=kube-system"}},
		{"flags between arguments", []string{"get", "pods", "-o", "wide", "web"}, []string{"get", "pods", "web", "-o", "wide"}},
		{"bool flag takes no value", []string{"get", "pods", "-w", "web"}, []string{"get", "pods", "web", "-w"}},
		{"selector before changes", []string{"label", "pods", "-l", "app=x", "env=prod"}, []string{"label", "pods", "env=prod", "-l", "app=x"}},
		{"bool flag", []string{"label", "po", "x", "--overwrite", "a-"}, []string{"label", "po", "x", "a-", "--overwrite"}},
		{"flag=value", []string{"scale", "--replicas=2", "rc", "x"}, []string{"scale", "rc", "x", "--replicas=2"}},
		{"patch", []string{"patch", "-p", `{"a":1}`, "rc", "x", "--type", "merge"}, []string{"patch", "rc", "x", "-p", `{"a":1}`, "--type", "merge"}},
		{"rolling-update with the image between the names", []string{"rolling-update", "frontend", "--image", "v2", "frontend-v2"}, []string{"rolling-update", "frontend", "frontend-v2", "--image", "v2"}},
		{"nested command", []string{"config", "--kubeconfig", "k", "set-context", "dev", "--namespace=dev"}, []string{"config", "set-context", "dev", "--kubeconfig", "k", "--namespace=dev"}},
		{"after a double dash, as is", []string{"get", "-o", "name", "--", "-x", "y"}, []string{"get", "-o", "name", "--", "-x", "y"}},
		{"root flag before the command", []string{"--log-level", "debug", "server"}, []string{"server", "--log-level", "debug"}},
		{"exec, the book's form: flags between the pod and the command", []string{"exec", "web", "-c", "shell", "-s", "http://h:8080", "date", "-u"},
			[]string{"exec", "web", "-c", "shell", "-s", "http://h:8080", "--", "date", "-u"}},
		{"exec: the command's own flags stay the command's", []string{"--kubeconfig", "k", "exec", "-it", "web", "sh", "-c", "echo hi"},
			[]string{"exec", "web", "--kubeconfig", "k", "-it", "--", "sh", "-c", "echo hi"}},
		{"exec with a double dash, as is", []string{"exec", "web", "-c", "shell", "--", "ls", "-l"}, []string{"exec", "web", "-c", "shell", "--", "ls", "-l"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reorder(tt.in, takes, passthrough); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("reorder(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPatchBody(t *testing.T) {
	tests := []struct {
		name, typ, patch string
		wantType         types.PatchType
		wantBody         string
		wantErr          string
	}{
		{"strategic default", "strategic", `{"spec":{"replicas":2}}`, types.StrategicMergePatchType, `{"spec":{"replicas":2}}`, ""},
		{"merge from yaml", "merge", "metadata:\n  labels:\n    a: b", types.MergePatchType, `{"metadata":{"labels":{"a":"b"}}}`, ""},
		{"json", "json", `[{"op":"remove","path":"/a"}]`, types.JSONPatchType, `[{"op":"remove","path":"/a"}]`, ""},
		{"bad type", "apply", `{}`, "", "", `--type must be one of [json merge strategic], not "apply"`},
		{"no patch", "merge", "", "", "", "must specify --patch or --patch-file containing the contents of the patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, body, err := (&patchCmd{Type: tt.typ, Patch: tt.patch}).body()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || pt != tt.wantType || string(body) != tt.wantBody {
				t.Fatalf("body = %s %s %v, want %s %s", pt, body, err, tt.wantType, tt.wantBody)
			}
		})
	}
}

func TestScalePreconditions(t *testing.T) {
	s := &unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"resourceVersion": "7"},
		"spec":     map[string]interface{}{"replicas": int64(2)},
	}}
	tests := []struct {
		name    string
		cmd     scaleCmd
		wantErr string
	}{
		{"none", scaleCmd{CurrentReplicas: -1}, ""},
		{"replicas match", scaleCmd{CurrentReplicas: 2, ResourceVersion: "7"}, ""},
		{"replicas differ", scaleCmd{CurrentReplicas: 3}, "Expected replicas to be 3, was 2"},
		{"version differs", scaleCmd{CurrentReplicas: -1, ResourceVersion: "6"}, "Expected resource version to be 6, was 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cmd.checkPreconditions(s)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// fakeAPI answers discovery and a replication controller, and records the writes.
type fakeAPI struct {
	mu     sync.Mutex
	writes []string
}

const fakeRC = `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"web","namespace":"default","labels":{"env":"prod"}},"spec":{"replicas":1}}`

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"replicationcontrollers","singularName":"replicationcontroller","namespaced":true,"kind":"ReplicationController","shortNames":["rc"],"verbs":["get","patch"]},{"name":"replicationcontrollers/scale","namespaced":true,"kind":"Scale","group":"autoscaling","version":"v1","verbs":["get","patch","update"]}]}`)
	case r.URL.Path == "/api/v1/namespaces/default/replicationcontrollers/web/scale" && r.Method == "GET":
		io.WriteString(w, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","resourceVersion":"5"},"spec":{"replicas":1}}`)
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/default/replicationcontrollers/web"):
		if r.Method != "GET" {
			body, _ := io.ReadAll(r.Body)
			f.mu.Lock()
			f.writes = append(f.writes, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(body))
			f.mu.Unlock()
			if string(body) != "{}" { // a write that changes something gets a new version
				io.WriteString(w, strings.Replace(fakeRC, `"name":"web"`, `"name":"web","resourceVersion":"6"`, 1))
				return
			}
		}
		io.WriteString(w, fakeRC)
	default:
		http.NotFound(w, r)
	}
}

func TestWriteCommandsGolden(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"label", []string{"label", "rc", "web", "app=web", "env-"}, "label.golden"},
		{"label without change", []string{"label", "rc/web", "env=prod"}, "label-no-change.golden"},
		{"label conflict", []string{"label", "rc", "web", "env=dev"}, "label-conflict.golden"},
		{"annotate with resource version", []string{"annotate", "rc", "web", "note=hi", "--resource-version=4"}, "annotate.golden"},
		{"scale", []string{"scale", "rc", "web", "--replicas=3"}, "scale.golden"},
		{"scale with precondition", []string{"scale", "--current-replicas=1", "rc", "web", "--replicas=3"}, "scale-precondition.golden"},
		{"scale precondition fails", []string{"scale", "--current-replicas=2", "rc", "web", "--replicas=3"}, "scale-precondition-fails.golden"},
		{"patch", []string{"patch", "rc", "web", "-p", `{"spec":{"replicas":2}}`}, "patch.golden"},
		{"patch no change", []string{"patch", "rc", "web", "--type=merge", "-p", `{}`}, "patch-no-change.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPI{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			kc := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(kc, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, kc, append(tt.args, "--server", srv.URL)...)
			api.mu.Lock()
			defer api.mu.Unlock()
			got := "stdout:\n" + out + "stderr:\n" + errOut + "writes:\n" + strings.Join(api.writes, "\n") + fmt.Sprintf("\nexit: %d\n", code)
			golden(t, tt.golden, []byte(got))
		})
	}
}

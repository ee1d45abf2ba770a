package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/printers"
)

func TestWatchPrintersGolden(t *testing.T) {
	tests := []struct{ name, output, golden string }{
		{"name", "name", "watch-name.golden"},
		{"json", "json", "watch-json.golden"},
		{"yaml", "yaml", "watch-yaml.golden"},
		{"jsonpath", "jsonpath={.metadata.name}={.status.phase}{\"\\n\"}", "watch-jsonpath.golden"},
		{"custom-columns: one header", "custom-columns=NAME:.metadata.name,PHASE:.status.phase", "watch-custom-columns.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseOutput(tt.output)
			if err != nil {
				t.Fatal(err)
			}
			op, err := f.objectPrinter(false)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := printEvents(bytes.NewReader(readTestdata(t, "watch-events.json")), false, &onceHeaderPrinter{p: op}, &out); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}

// TestWatchTableEventsGolden prints Table events (each a one-row table, as the
// server sends them) with the table printer, wide and not.
func TestWatchTableEventsGolden(t *testing.T) {
	var table map[string]interface{}
	if err := json.Unmarshal(readTestdata(t, "pods-table.json"), &table); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	for i, row := range table["rows"].([]interface{}) {
		ev := map[string]interface{}{}
		for k, v := range table {
			ev[k] = v
		}
		ev["rows"] = []interface{}{row}
		typ := "ADDED"
		if i > 0 {
			typ = "MODIFIED"
		}
		b, err := json.Marshal(map[string]interface{}{"type": typ, "object": ev})
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(append(b, '\n'))
	}
	tests := []struct {
		name   string
		opts   printers.PrintOptions
		golden string
	}{
		{"table", printers.PrintOptions{}, "watch-table.golden"},
		{"wide", printers.PrintOptions{Wide: true}, "watch-wide.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printEvents(bytes.NewReader(stream.Bytes()), true, printers.NewTablePrinter(tt.opts), &out); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}

// TestWatchAgainstServer watches pods with object formats on a real in-process
// server and sees a pod created after the watch started.
func TestWatchAgainstServer(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	url := startServer(t)
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, kc, "run", "before", "--image=nginx", "--restart=Never", "--server", url); code != 0 {
		t.Fatal(errOut)
	}
	tests := []struct {
		name      string
		cmd       getCmd
		pod       string
		want      []string
		wantNever string
	}{
		{"name", getCmd{Output: "name", Watch: true}, "after-1", []string{"pod/before\n", "pod/after-1\n"}, ""},
		{"yaml", getCmd{Output: "yaml", Watch: true}, "after-2", []string{"name: before", "---\n", "name: after-2"}, ""},
		{"watch-only skips the list", getCmd{Output: "jsonpath={.metadata.name} ", WatchOnly: true}, "after-3", []string{"after-3 "}, "before"},
		{"wide table", getCmd{Output: "wide", Watch: true}, "after-4", []string{"NOMINATED NODE", "before", "after-4"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cmd
			c.Server, c.Kubeconfig, c.Args = url, kc, []string{"pods"}
			ctx, cancel := context.WithCancel(context.Background())
			var out syncBuffer
			done := make(chan error, 1)
			go func() { done <- c.run(ctx, &out) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("watch: %v", err)
				}
			}()
			if !tt.cmd.WatchOnly {
				eventually(t, "the list is printed", func() error { return contains(out.String(), "before") })
			}
			if _, errOut, code := runCLI(t, kc, "run", tt.pod, "--image=nginx", "--restart=Never", "--server", url); code != 0 {
				t.Fatal(errOut)
			}
			eventually(t, "the new pod is printed", func() error {
				for _, w := range tt.want {
					if err := contains(out.String(), w); err != nil {
						return err
					}
				}
				return nil
			})
			if tt.wantNever != "" && strings.Contains(out.String(), tt.wantNever) {
				t.Fatalf("printed %q:\n%s", tt.wantNever, out.String())
			}
		})
	}
}

func contains(s, sub string) error {
	if !strings.Contains(s, sub) {
		return &missingError{s, sub}
	}
	return nil
}

type missingError struct{ s, sub string }

func (e *missingError) Error() string { return "no " + e.sub + " in:\n" + e.s }

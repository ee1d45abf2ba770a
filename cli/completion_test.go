package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func testModel(t *testing.T) *kong.Node {
	t.Helper()
	parser, err := kong.New(&root{})
	if err != nil {
		t.Fatal(err)
	}
	return parser.Model.Node
}

func TestCompletionScriptsMentionEveryCommand(t *testing.T) {
	app := testModel(t)
	cmds := visibleCommands(app)
	scripts := map[string]string{"bash": bashScript(cmds), "zsh": zshScript(cmds), "fish": fishScript(cmds)}
	for shell, script := range scripts {
		t.Run(shell, func(t *testing.T) {
			for _, c := range commandTree(cmds) {
				last := c.Path[strings.LastIndex(c.Path, " ")+1:]
				if shell == "zsh" && last != c.Path {
					continue // zsh asks __complete for subcommands
				}
				if !strings.Contains(script, last) {
					t.Errorf("%s script does not mention %q", shell, c.Path)
				}
			}
			if !strings.Contains(script, "__complete") {
				t.Errorf("%s script does not call back into the binary", shell)
			}
			if !strings.Contains(script, "watch-only") && shell != "zsh" {
				t.Errorf("%s script lacks get's flags", shell)
			}
		})
	}
}

func TestCompletionScriptsParse(t *testing.T) {
	cmds := visibleCommands(testModel(t))
	tests := []struct {
		shell  string
		script string
		check  []string
	}{
		{"bash", bashScript(cmds), []string{"bash", "-n"}},
		{"zsh", zshScript(cmds), []string{"zsh", "-n"}},
		{"fish", fishScript(cmds), []string{"fish", "-n"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			if _, err := exec.LookPath(tt.check[0]); err != nil {
				t.Skipf("%s is not installed", tt.check[0])
			}
			path := filepath.Join(t.TempDir(), "script")
			if err := os.WriteFile(path, []byte(tt.script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tt.check[0], append(tt.check[1:], path)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(tt.check, " "), err, out)
			}
		})
	}
}

// TestBashCompletionRuns loads the bash script and completes a command name, with no
// server needed.
func TestBashCompletionRuns(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	path := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(path, []byte(bashScript(visibleCommands(testModel(t)))), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `source "$1"; COMP_WORDS=(kubeactor ap); COMP_CWORD=1; _kubeactor; echo "${COMPREPLY[*]}"
COMP_WORDS=(kubeactor get --watch-o); COMP_CWORD=2; _kubeactor; echo "${COMPREPLY[*]}"`
	out, err := exec.Command("bash", "-c", script, "bash", path).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if got := string(out); got != "api-versions apply\n--watch-only\n" {
		t.Fatalf("completions %q", got)
	}
}

// TestFishCompletionRuns loads the fish script and asks fish for the completions of a
// command name and of a flag, with no server needed.
func TestFishCompletionRuns(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	path := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(path, []byte(fishScript(visibleCommands(testModel(t)))), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want []string
	}{
		{"kubeactor ap", []string{"api-versions", "apply"}},
		{"kubeactor get --watch-o", []string{"--watch-only"}},
		{"kubeactor config use", []string{"use-context"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			out, err := exec.Command("fish", "-c", `source $argv[1]; complete -C $argv[2]`, path, tt.line).Output()
			if err != nil {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				got = append(got, strings.SplitN(l, "\t", 2)[0]) // candidate, then its description
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("completions %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPlanCompletion(t *testing.T) {
	app := testModel(t)
	tests := []struct {
		name  string
		words []string
		want  completionPlan
	}{
		{"commands", []string{"ge"}, completionPlan{Prefix: "ge", Candidates: []string{"get"}}},
		{"types for get", []string{"get", ""}, completionPlan{Query: queryTypes}},
		{"names for get pods", []string{"get", "pods", "we"}, completionPlan{Prefix: "we", Query: queryNames, Resource: "pods"}},
		{"flags before the type are skipped", []string{"get", "-o", "wide", "-n", "kube-system", "rc", ""}, completionPlan{Query: queryNames, Resource: "rc", FlagValues: map[string]string{"output": "wide", "namespace": "kube-system"}}},
		{"TYPE/NAME", []string{"describe", "po/w"}, completionPlan{Prefix: "po/w", Query: queryTypedNames, Resource: "po"}},
		{"namespace value", []string{"get", "--namespace", ""}, completionPlan{Query: queryNames, Resource: "namespaces"}},
		{"bash splits --namespace=x at =", []string{"get", "--namespace", "=", "ku"}, completionPlan{Prefix: "ku", Query: queryNames, Resource: "namespaces"}},
		{"underscore flag", []string{"get", "--field_selector", "x", "pods", ""}, completionPlan{Query: queryNames, Resource: "pods", FlagValues: map[string]string{"field-selector": "x"}}},
		{"output formats", []string{"get", "-o", "j"}, completionPlan{Prefix: "j", Candidates: outputFormats}},
		{"rcs for rolling-update", []string{"rolling-update", ""}, completionPlan{Query: queryNames, Resource: "replicationcontrollers"}},
		{"nodes for cordon", []string{"cordon", "n"}, completionPlan{Prefix: "n", Query: queryNames, Resource: "nodes"}},
		{"shells", []string{"completion", ""}, completionPlan{Candidates: []string{"bash", "zsh", "fish"}}},
		{"nested command", []string{"config", "use-context", ""}, completionPlan{Query: queryContexts}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planCompletion(app, tt.words)
			if tt.want.FlagValues == nil {
				tt.want.FlagValues = map[string]string{}
			}
			got.Candidates = filterPrefix(got.Candidates, got.Prefix)
			tt.want.Candidates = filterPrefix(tt.want.Candidates, tt.want.Prefix)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("plan\n%+v, want\n%+v", got, tt.want)
			}
		})
	}
}

func TestCompleteAgainstServer(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	url := startServer(t)
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-1", "web-2", "db"} {
		if _, errOut, code := runCLI(t, kc, "run", name, "--image=nginx", "--restart=Never", "--server", url); code != 0 {
			t.Fatalf("run %s: %s", name, errOut)
		}
	}
	tests := []struct {
		name  string
		words []string
		want  string
	}{
		{"pod names", []string{"get", "pods", "we"}, "web-1\nweb-2\n"},
		{"all pod names", []string{"delete", "po", ""}, "db\nweb-1\nweb-2\n"},
		{"TYPE/NAME", []string{"get", "pod/d"}, "pod/db\n"},
		{"resource types", []string{"get", "replication"}, "replicationcontrollers\n"},
		{"namespaces", []string{"get", "pods", "-n", "defa"}, "default\n"},
		{"another namespace has no pods", []string{"get", "pods", "-n", "kube-system", "we"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"__complete", "--server", url, "--kubeconfig", kc, "--"}, tt.words...)
			var out syncBuffer
			if code := run(append([]string{"kubeactor"}, args...), &out, &out); code != 0 || out.String() != tt.want {
				t.Fatalf("__complete %q: exit %d, printed %q, want %q", tt.words, code, out.String(), tt.want)
			}
		})
	}
}

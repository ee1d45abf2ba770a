package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The run's logs (issue 14, "secrets are secret"): every process the harness starts
// (server, agent, proxy) also writes its output to a file of its own in one directory
// per run, and tests register the secret values they use; after the run TestMain
// searches every file for every value (checkRunLogs). The directory is removed unless
// a value was found in it.

var runLogs struct {
	mu      sync.Mutex
	dir     string
	seq     int
	secrets []registeredSecret
}

// registeredSecret is a value a test used and no log may hold.
type registeredSecret struct {
	owner, what, value string
}

// minSecretLen is the shortest value searched for: shorter ones (the book's
// "thomas") are also names that logs rightly carry.
const minSecretLen = 8

// RegisterSecret records value (what says what it is, never the value itself) as a
// secret test t used: no process log of the run may hold it, as is or base64
// encoded. Values shorter than minSecretLen are not searched for.
func RegisterSecret(t testing.TB, what, value string) {
	if len(value) < minSecretLen {
		return
	}
	runLogs.mu.Lock()
	defer runLogs.mu.Unlock()
	for _, r := range runLogs.secrets {
		if r.owner == t.Name() && r.value == value {
			return
		}
	}
	runLogs.secrets = append(runLogs.secrets, registeredSecret{owner: t.Name(), what: what, value: value})
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// runLogFile opens a new file in the run's log directory for a process of test t
// (kind: "server", "agent", the program's name). A nil file (with the error logged)
// means the logs of this process are not kept.
func runLogFile(t testing.TB, kind string) *os.File {
	runLogs.mu.Lock()
	defer runLogs.mu.Unlock()
	if runLogs.dir == "" {
		dir, err := os.MkdirTemp("", "kubeactor-e2e-logs-")
		if err != nil {
			t.Logf("no run log directory: %v", err)
			return nil
		}
		runLogs.dir = dir
	}
	runLogs.seq++
	name := fmt.Sprintf("%04d-%s-%s.log", runLogs.seq, unsafeName.ReplaceAllString(t.Name(), "_"), unsafeName.ReplaceAllString(filepath.Base(kind), "_"))
	f, err := os.OpenFile(filepath.Join(runLogs.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Logf("no run log file: %v", err)
		return nil
	}
	return f
}

// secretForms are the spellings of a value searched for: as is and base64 encoded
// (standard, unpadded and URL alphabets), as secret data and Basic credentials carry it.
func secretForms(value string) map[string]string {
	return map[string]string{
		"plain":         value,
		"base64":        base64.StdEncoding.EncodeToString([]byte(value)),
		"base64-raw":    base64.RawStdEncoding.EncodeToString([]byte(value)),
		"base64-rawurl": base64.RawURLEncoding.EncodeToString([]byte(value)),
	}
}

// leak is one registered value found in a log file: it names the value's owner and
// what it is, the file and the line, never the value.
type leak struct {
	owner, what, form, file string
	line                    int
}

func (l leak) String() string {
	return fmt.Sprintf("%s registered by %s (%s form) is in %s line %d", l.what, l.owner, l.form, l.file, l.line)
}

// findLeaks searches every file in dir for every form of every secret.
func findLeaks(dir string, secrets []registeredSecret) ([]leak, int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var leaks []leak
	files := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		files++
		path := filepath.Join(dir, e.Name())
		found, err := searchFile(path, secrets)
		if err != nil {
			return nil, files, err
		}
		leaks = append(leaks, found...)
	}
	sort.Slice(leaks, func(i, j int) bool {
		if leaks[i].file != leaks[j].file {
			return leaks[i].file < leaks[j].file
		}
		return leaks[i].line < leaks[j].line
	})
	return leaks, files, nil
}

// searchFile reports the first line of path holding each (secret, form).
func searchFile(path string, secrets []registeredSecret) ([]leak, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type key struct {
		i    int
		form string
	}
	seen := map[key]bool{}
	type pattern struct {
		i          int
		form, text string
	}
	var patterns []pattern
	for i, s := range secrets {
		for form, v := range secretForms(s.value) {
			patterns = append(patterns, pattern{i, form, v})
		}
	}
	var leaks []leak
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, p := range patterns {
			if k := (key{p.i, p.form}); !seen[k] && strings.Contains(line, p.text) {
				seen[k] = true
				s := secrets[p.i]
				leaks = append(leaks, leak{owner: s.owner, what: s.what, form: p.form, file: path, line: n})
			}
		}
	}
	return leaks, sc.Err()
}

// checkRunLogs searches the run's logs for the registered secrets. With none found
// the directory is removed; otherwise it is kept and the answer names each leak (not
// the value). ok is false when a secret leaked or the logs could not be searched.
func checkRunLogs() (report string, ok bool) {
	runLogs.mu.Lock()
	dir, secrets := runLogs.dir, append([]registeredSecret(nil), runLogs.secrets...)
	runLogs.mu.Unlock()
	if dir == "" {
		return "", true
	}
	return checkLogs(dir, secrets)
}

// checkLogs is checkRunLogs on the logs in dir.
func checkLogs(dir string, secrets []registeredSecret) (report string, ok bool) {
	leaks, files, err := findLeaks(dir, secrets)
	if err != nil {
		return fmt.Sprintf("secrets are secret: cannot search the run's logs in %s: %v", dir, err), false
	}
	if len(leaks) == 0 {
		_ = os.RemoveAll(dir)
		return fmt.Sprintf("secrets are secret: %d registered values not found in the %d process logs of the run", len(secrets), files), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "secrets are secret: FAIL: %d registered values found in the run's process logs (kept in %s):\n", len(leaks), dir)
	for _, l := range leaks {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String(), false
}

// processKind names a process for its log file: the kubeactor command (agent,
// proxy) or, for a program run through another (ip netns exec, a kube-proxy link),
// the first argument that is a path's base name.
func processKind(program string, args []string) string {
	base := filepath.Base(program)
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if base == "kubeactor" || strings.HasPrefix(base, "kubeactor") {
			return base + "-" + a
		}
		break
	}
	if base == "ip" {
		for _, a := range args {
			if strings.Contains(a, "/") {
				return filepath.Base(a)
			}
		}
	}
	return base
}

// RegisterKeys registers the private keys the server keeps in its certificate
// directory (<data-dir>/pki/*.key) as secrets of test t: the first line of each PEM
// body, which any logged form of the key (PEM, or its DER in base64) holds.
func (s *Server) RegisterKeys(t testing.TB) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(s.DataDir, "pki", "*.key"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no private keys in %s: %v", filepath.Join(s.DataDir, "pki"), err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(b)
		if block == nil {
			t.Fatalf("%s: no PEM block", p)
		}
		body := base64.StdEncoding.EncodeToString(block.Bytes)
		RegisterSecret(t, "the private key "+filepath.Base(p), body[:min(64, len(body))])
	}
}

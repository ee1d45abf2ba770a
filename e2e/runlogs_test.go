package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLogsLeakSearch: the search TestMain makes over the run's logs finds each
// registered value in each of its forms, names the owner test and the file, never
// the value, keeps the directory when it finds one and removes it otherwise.
func TestRunLogsLeakSearch(t *testing.T) {
	const value = "s3cr3t-value-0123"
	secrets := []registeredSecret{{owner: "TestOwner", what: "the owner's token", value: value}}
	tests := []struct {
		name     string
		logs     map[string]string
		wantLeak string // the form found, "" for none
	}{
		{"clean logs", map[string]string{"a.log": `{"msg":"serving"}` + "\n", "b.log": "token=<redacted>\n"}, ""},
		{"no logs", map[string]string{}, ""},
		{"plain", map[string]string{"a.log": "x\n" + `{"msg":"auth","token":"` + value + `"}` + "\n"}, "plain"},
		{"base64", map[string]string{"a.log": "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(value)) + "\n"}, "base64"},
		{"base64 url", map[string]string{"b.log": "data " + base64.RawURLEncoding.EncodeToString([]byte(value)) + "\n"}, "base64-rawurl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			logDir := filepath.Join(dir, "logs")
			if err := os.Mkdir(logDir, 0o700); err != nil {
				t.Fatal(err)
			}
			for name, text := range tc.logs {
				writeFile(t, logDir, name, text)
			}
			report, ok := checkLogs(logDir, secrets)
			if strings.Contains(report, value) {
				t.Fatalf("the report holds the value: %s", report)
			}
			_, statErr := os.Stat(logDir)
			if tc.wantLeak == "" {
				if !ok {
					t.Fatalf("a leak reported in clean logs: %s", report)
				}
				if !os.IsNotExist(statErr) {
					t.Fatalf("clean logs kept: %v", statErr)
				}
				return
			}
			if ok {
				t.Fatalf("the %s form not found: %s", tc.wantLeak, report)
			}
			for _, want := range []string{"TestOwner", "the owner's token", "(" + tc.wantLeak + " form)", logDir} {
				if !strings.Contains(report, want) {
					t.Errorf("the report does not name %q: %s", want, report)
				}
			}
			if statErr != nil {
				t.Errorf("logs with a leak not kept: %v", statErr)
			}
		})
	}
}

// TestProcessKind: log files are named by the process they hold.
func TestProcessKind(t *testing.T) {
	for _, tc := range []struct {
		program string
		args    []string
		want    string
	}{
		{"/work/bin/kubeactor", []string{"agent", "--simulate", "1"}, "kubeactor-agent"},
		{"/tmp/x/kubeactor", []string{"proxy", "--kubeconfig", "k"}, "kubeactor-proxy"},
		{"ip", []string{"netns", "exec", "h1", "/tmp/y/kube-proxy", "--v=2"}, "kube-proxy"},
		{"docker-registry", []string{"serve", "/etc/c.yml"}, "docker-registry"},
	} {
		if got := processKind(tc.program, tc.args); got != tc.want {
			t.Errorf("processKind(%s, %v) = %s, want %s", tc.program, tc.args, got, tc.want)
		}
	}
}

// TestAroundHidesTheValue: the excerpt a leak test prints shows the line, not the value.
func TestAroundHidesTheValue(t *testing.T) {
	const v = "hunter2-secret"
	text := "first line\n{\"msg\":\"auth\",\"token\":\"" + v + "\",\"again\":\"" + v + "\"}\nlast line\n"
	got := around(text, strings.Index(text, v), len(v))
	if strings.Contains(got, v) || !strings.Contains(got, `"token":"<the value>"`) || strings.Contains(got, "first line") {
		t.Fatalf("around = %q", got)
	}
}

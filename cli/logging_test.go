package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
)

func TestGlogLevels(t *testing.T) {
	tests := []struct {
		name     string
		logLevel string
		v        int
		want     logrus.Level
	}{
		{"book's --v=0", "info", 0, logrus.InfoLevel},
		{"--v=2 is debug", "info", 2, logrus.DebugLevel},
		{"--v=4 is trace", "info", 4, logrus.TraceLevel},
		{"--log-level debug wins over --v=0", "debug", 0, logrus.DebugLevel},
		{"--v never lowers", "warn", 0, logrus.WarnLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, done, err := glogLogger(config.Logging{LogLevel: tt.logLevel}, config.Glog{LogToStderr: true, Verbosity: tt.v, StderrThreshold: "2"}, "kubelet", &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			if log.GetLevel() != tt.want {
				t.Fatalf("level %s, want %s", log.GetLevel(), tt.want)
			}
		})
	}
}

func TestGlogOutputs(t *testing.T) {
	tests := []struct {
		name       string
		g          config.Glog
		wantStderr []string // messages on stderr
		wantFile   []string // messages in the file; nil: no file
	}{
		{"stderr only", config.Glog{LogToStderr: true, StderrThreshold: "2"}, []string{"i", "w", "e"}, nil},
		{"file, errors on stderr", config.Glog{StderrThreshold: "2"}, []string{"e"}, []string{"i", "w", "e"}},
		{"file, warnings on stderr", config.Glog{StderrThreshold: "WARNING"}, []string{"w", "e"}, []string{"i", "w", "e"}},
		{"file and stderr", config.Glog{AlsoLogToStderr: true, StderrThreshold: "2"}, []string{"i", "w", "e"}, []string{"i", "w", "e"}},
		{"vmodule lets one file's debug through", config.Glog{LogToStderr: true, StderrThreshold: "2", VModule: "logging_test=2"}, []string{"d", "i", "w", "e"}, nil},
		{"vmodule for another file", config.Glog{LogToStderr: true, StderrThreshold: "2", VModule: "decide=2"}, []string{"i", "w", "e"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.g.LogDir = dir
			var stderr bytes.Buffer
			log, done, err := glogLogger(config.Logging{LogLevel: "info", LogFormat: "json"}, tt.g, "kube-proxy", &stderr)
			if err != nil {
				t.Fatal(err)
			}
			log.Debug("d")
			log.Info("i")
			log.Warn("w")
			log.Error("e")
			done()
			if got := messages(stderr.String()); strings.Join(got, ",") != strings.Join(tt.wantStderr, ",") {
				t.Errorf("stderr has %q, want %q", got, tt.wantStderr)
			}
			data, err := os.ReadFile(filepath.Join(dir, "kube-proxy.INFO"))
			if tt.wantFile == nil {
				if err == nil {
					t.Errorf("a log file was written")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := messages(string(data)); strings.Join(got, ",") != strings.Join(tt.wantFile, ",") {
				t.Errorf("file has %q, want %q", got, tt.wantFile)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "kube-proxy.*.*.log.INFO.*-*.*"))
			if len(matches) != 1 {
				t.Errorf("files named as glog's: %q", matches)
			}
		})
	}
}

// messages returns the msg of each JSON log line.
func messages(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if _, rest, ok := strings.Cut(l, `"msg":"`); ok {
			m, _, _ := strings.Cut(rest, `"`)
			out = append(out, m)
		}
	}
	return out
}

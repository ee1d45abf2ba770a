package docker

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// TestDockerAttach attaches to containers' own stdio on the real engine: stdin
// (closed for good with StdinOnce, so the container ends and the attachment with
// it), the two output streams apart, a terminal's merged stream, and the refusals.
func TestDockerAttach(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	echo := []string{"sh", "-c", `while read l; do echo "o:$l"; echo "e:$l" >&2; done; echo done`}
	tests := []struct {
		name       string
		cfg        runtime.ContainerConfig
		stdin      string
		noStdin    bool
		start      bool
		wantStdout string
		wantStderr string
		wantErr    string
	}{
		{name: "streams apart", cfg: runtime.ContainerConfig{Entrypoint: echo, Stdin: true, StdinOnce: true}, stdin: "a\nb\n", start: true,
			wantStdout: "o:a\no:b\ndone\n", wantStderr: "e:a\ne:b\n"},
		{name: "terminal", cfg: runtime.ContainerConfig{Entrypoint: []string{"sh", "-c", "read l; echo got:$l"}, Stdin: true, StdinOnce: true, TTY: true},
			stdin: "hi\n", start: true, wantStdout: "got:hi\r\n"},
		{name: "stdin of a container without", cfg: runtime.ContainerConfig{Entrypoint: []string{"sleep", "3600"}}, stdin: "x\n", start: true,
			wantErr: "not created with stdin open"},
		{name: "not running", cfg: runtime.ContainerConfig{Entrypoint: echo, Stdin: true}, noStdin: true, wantErr: "not running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Image = busyboxImage
			id := run(t, d, cfg, tt.start)
			var stdout, stderr bytes.Buffer
			opts := runtime.AttachOptions{Stdout: &stdout, Stderr: &stderr}
			switch {
			case cfg.TTY:
				// The engine ends a terminal's attachment when its input ends: keep
				// the input open, the container's exit ends the attachment.
				pr, pw := io.Pipe()
				t.Cleanup(func() { _ = pw.Close() })
				go func() { _, _ = io.WriteString(pw, tt.stdin) }()
				opts.Stdin = pr
			case !tt.noStdin:
				opts.Stdin = strings.NewReader(tt.stdin)
			}
			err := d.Attach(testCtx(t), id, opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(stdout.String(), tt.wantStdout) || (!cfg.TTY && stdout.String() != tt.wantStdout) {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.wantStdout)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

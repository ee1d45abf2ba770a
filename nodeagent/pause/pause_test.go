package pause

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/internal/poll"
)

func TestIs(t *testing.T) {
	for arg0, want := range map[string]bool{"/pause": true, "pause": true, "./bin/pause": true, "/usr/bin/kubeactor": false, "pauser": false} {
		if Is(arg0) != want {
			t.Errorf("Is(%q) = %v", arg0, !want)
		}
	}
}

// TestWaitStops: SIGCHLD does not stop it; SIGTERM and SIGINT do, with exit code 0
// and one line.
func TestWaitStops(t *testing.T) {
	for _, stop := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		sigs := make(chan os.Signal, 2)
		sigs <- syscall.SIGCHLD
		sigs <- stop
		var out bytes.Buffer
		if code := wait(sigs, &out); code != 0 || !strings.HasPrefix(out.String(), "pause: shutting down on ") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("%v: code %d, stderr %q", stop, code, out.String())
		}
	}
}

// TestReap: an exited child (a zombie) is collected.
func TestReap(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	pid := cmd.Process.Pid
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	poll.Until(t, 10*time.Second, "the child exits", func() error {
		b, err := os.ReadFile(stat)
		if err != nil || !strings.Contains(string(b), ") Z ") {
			return fmt.Errorf("not a zombie yet: %q %v", b, err)
		}
		return nil
	})
	reap()
	if _, err := os.Stat(stat); !os.IsNotExist(err) {
		t.Errorf("the child is still there after reap: %v", err)
	}
}

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRollingUpdateImage runs the book's image rolling update of the guestbook
// frontend against a real server: three one-for-one steps, the hashed RC renamed
// back to frontend, checked with the real kubectl.
func TestRollingUpdateImage(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, "", "create", "-f", guestbook("frontend-controller.yaml"))
	Eventually(t, 30*time.Second, "frontend status", func() error {
		if got := s.MustKubectl(t, "", "get", "rc", "frontend", "-o", "jsonpath={.status.replicas}"); got != "3" {
			return fmt.Errorf("status.replicas = %s", got)
		}
		return nil
	})

	r := s.Kubeactor(t, "", "rolling-update", "frontend", "--image=kubeguide/guestbook-php-frontend:v2",
		"--update-period=100ms", "--poll-interval=50ms")
	if r.Err != nil {
		t.Fatalf("rolling-update: %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, r.Stderr)
	}
	m := regexp.MustCompile(`^Creating (frontend-[0-9a-f]{32})\n`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no Creating line:\n%s", r.Stdout)
	}
	newName := m[1]
	var want strings.Builder
	fmt.Fprintf(&want, "Creating %s\n", newName)
	for _, step := range [][2]int{{2, 1}, {1, 2}, {0, 3}} {
		for _, prefix := range []string{"At beginning of loop: ", "Updating ", "At end of loop: "} {
			fmt.Fprintf(&want, "%sfrontend replicas: %d, %s replicas: %d\n", prefix, step[0], newName, step[1])
		}
	}
	fmt.Fprintf(&want, "Update succeeded. Deleting old controller: frontend\nRenaming %s to frontend\nfrontend\n", newName)
	if r.Stdout != want.String() {
		t.Errorf("transcript:\n%s\nwant:\n%s", r.Stdout, want.String())
	}

	got := s.MustKubectl(t, "", "get", "rc", "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image} {.spec.replicas} {.spec.selector.deployment}{\"\\n\"}{end}")
	hash := strings.TrimPrefix(newName, "frontend-")
	if wantRC := "frontend kubeguide/guestbook-php-frontend:v2 3 " + hash + "\n"; got != wantRC && got+"\n" != wantRC {
		t.Errorf("rcs after the update:\n%s\nwant:\n%s", got, wantRC)
	}
	Eventually(t, 30*time.Second, "frontend settles at 3 pods", func() error {
		if got := s.MustKubectl(t, "", "get", "rc", "frontend", "-o", "jsonpath={.status.replicas}"); got != "3" {
			return fmt.Errorf("status.replicas = %s", got)
		}
		if n := len(podNames(t, s, "name=frontend")); n != 3 {
			return fmt.Errorf("%d frontend pods", n)
		}
		return nil
	})
	if r := s.Kubectl("", "get", "rc", newName); r.Err == nil {
		t.Errorf("the hashed RC %s is still there: %s", newName, r.Stdout)
	}
}

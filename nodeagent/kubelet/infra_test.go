package kubelet

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// TestEnsureInfraImage: a missing infra image is imported from the running binary
// (one file, /pause, the entrypoint), with one info line; a present one is left.
func TestEnsureInfraImage(t *testing.T) {
	bin := t.TempDir() + "/kubeactor"
	if err := os.WriteFile(bin, []byte("\x7fELF-not-really"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable() // the test binary, static or not (cgo)
	if err != nil {
		t.Fatal(err)
	}
	oldSelf, oldRunnable := selfBinary, runnable
	selfBinary = func() (string, error) { return self, nil }
	runnable = func(string) error { return nil }
	t.Cleanup(func() { selfBinary, runnable = oldSelf, oldRunnable })
	fi, err := os.Stat(self)
	if err != nil {
		t.Fatal(err)
	}

	eng := newFakeEngine()
	log, hook := logtest.NewNullLogger()
	built, err := ensureInfraImage(context.Background(), eng, "kubeactor/pause-x:1", log)
	if err != nil || !built {
		t.Fatalf("ensureInfraImage: %v %v", built, err)
	}
	if len(eng.imports) != 1 {
		t.Fatalf("imports %+v", eng.imports)
	}
	im := eng.imports[0]
	if im.ref != "kubeactor/pause-x:1" || len(im.files) != 1 || im.files["pause"] != fi.Size() ||
		strings.Join(im.changes, ";") != `ENTRYPOINT ["/pause"]` {
		t.Errorf("import %+v", im)
	}
	if len(hook.AllEntries()) != 1 || hook.LastEntry().Level != logrus.InfoLevel {
		t.Errorf("log %+v", hook.AllEntries())
	}

	built, err = ensureInfraImage(context.Background(), eng, "kubeactor/pause-x:1", log)
	if err != nil || built || len(eng.imports) != 1 {
		t.Errorf("second call: built %v err %v imports %d", built, err, len(eng.imports))
	}

	// A program that is not a static ELF is refused with the way out.
	selfBinary, runnable = func() (string, error) { return bin, nil }, checkStatic
	_, err = ensureInfraImage(context.Background(), newFakeEngine(), "p:1", log)
	if err == nil || !strings.Contains(err.Error(), "make images") {
		t.Errorf("non-ELF binary: %v", err)
	}
}

// TestCheckStaticRefusesDynamic: a dynamically linked program (the machine's sh) is
// refused.
func TestCheckStaticRefusesDynamic(t *testing.T) {
	for _, p := range []string{"/bin/sh", "/usr/bin/env"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := checkStatic(p); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("%s: %v", p, err)
		}
		return
	}
	t.Skip("no dynamically linked program found")
}

var _ runtime.Images = (*fakeEngine)(nil)

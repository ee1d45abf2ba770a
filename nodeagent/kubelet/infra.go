package kubelet

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/nodeagent/pause"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// selfBinary is the path of the running program, copied into the infra image, and
// runnable tells whether it can run alone in an image (tests replace both).
var (
	selfBinary = os.Executable
	runnable   = checkStatic
)

// infraImageChanges are the Dockerfile instructions of the infra image the agent
// builds: the binary, run as /pause, is the pause process (see package pause).
var infraImageChanges = []string{`ENTRYPOINT ["/` + pause.Name + `"]`}

// ensureInfraImage makes sure the engine holds the pod infra image ref. When it is
// missing, the agent builds it with no registry: an image whose only file is a copy
// of the running (static) binary at /pause, imported from a tar stream. It tells
// whether it built the image.
func ensureInfraImage(ctx context.Context, rt runtime.Runtime, ref string, log logrus.FieldLogger) (bool, error) {
	_, err := rt.InspectImage(ctx, ref)
	if err == nil {
		return false, nil
	}
	if !runtime.IsNotFound(err) {
		return false, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	images, ok := rt.(runtime.Images)
	if !ok {
		return false, fmt.Errorf("the pod infra image %s is not in the engine, which cannot import one; build it with `make images` (images/build.sh)", ref)
	}
	bin, err := selfBinary()
	if err != nil {
		return false, fmt.Errorf("the pod infra image %s is missing and this binary cannot be found to build it: %w", ref, err)
	}
	if err := runnable(bin); err != nil {
		return false, fmt.Errorf("the pod infra image %s is missing and cannot be built from %s: %w; build the binary with CGO_ENABLED=0 (make build) or the image with `make images`", ref, bin, err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeInfraRootfs(pw, bin)) }()
	err = images.ImportImage(ctx, ref, pr, infraImageChanges)
	_ = pr.Close()
	if err != nil {
		return false, fmt.Errorf("build the pod infra image %s: %w", ref, err)
	}
	log.WithFields(logrus.Fields{"image": ref, "from": bin}).Info("built the pod infra image from this binary (it was not in the engine)")
	return true, nil
}

// writeInfraRootfs writes the infra image's root filesystem as a tar stream: the
// file at bin, as /pause.
func writeInfraRootfs(w io.Writer, bin string) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	hdr := &tar.Header{Name: pause.Name, Mode: 0o755, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}

// checkStatic tells whether the ELF program at path runs without a dynamic loader
// (an image with only that file must be able to run it).
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not an ELF program: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("it is dynamically linked")
		}
	}
	return nil
}

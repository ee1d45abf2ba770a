package docker

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// TestDockerImportListRemoveImage: an image imported from a tar stream, with an
// entrypoint, is listed with its tag, and removed with every tag it has.
func TestDockerImportListRemoveImage(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	ref := "kubeactor/import-test:" + hex.EncodeToString(b[:])
	second := ref + "-again"
	t.Cleanup(func() {
		_, _ = d.cli.ImageRemove(testCtx(t), ref, imageRemoveForce())
		_, _ = d.cli.ImageRemove(testCtx(t), second, imageRemoveForce())
	})

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	content := []byte("not a program")
	if err := tw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(content)
	_ = tw.Close()
	if err := d.ImportImage(ctx, ref, &buf, []string{`ENTRYPOINT ["/pause"]`}); err != nil {
		t.Fatal(err)
	}
	r, err := d.cli.ImageInspect(ctx, ref)
	if err != nil || r.Config == nil || strings.Join(r.Config.Entrypoint, " ") != "/pause" {
		t.Fatalf("inspect %s: %v %+v", ref, err, r.Config)
	}
	if err := d.cli.ImageTag(ctx, ref, second); err != nil {
		t.Fatal(err)
	}
	list, err := d.ListImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(im runtime.Image) bool { return im.ID == r.ID })
	if i < 0 || !slices.Contains(list[i].Tags, ref) || !slices.Contains(list[i].Tags, second) || list[i].Size <= 0 {
		t.Fatalf("listed %+v", list)
	}
	if err := d.RemoveImage(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.InspectImage(ctx, r.ID); !runtime.IsNotFound(err) {
		t.Errorf("after remove: %v", err)
	}
	if err := d.RemoveImage(ctx, r.ID); !runtime.IsNotFound(err) {
		t.Errorf("remove again: %v", err)
	}
}

func imageRemoveForce() image.RemoveOptions { return image.RemoveOptions{Force: true} }

package pause

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// The modes of the program besides pausing, named by its first argument: the
// volume recycler's pods run the infra image with them (a PersistentVolume's
// reclaim policy Recycle and Delete), so reclaiming a volume needs no other image.
const (
	// Scrub empties a directory (`pause scrub DIR`): every entry under it, dot-files
	// included, goes; the directory itself stays (it is the volume's mount point).
	Scrub = "scrub"
	// Delete removes a directory and everything under it (`pause delete PATH`); a
	// path that does not exist is already deleted.
	Delete = "delete"
)

// Main runs the program as the infra image's /pause, given its arguments after the
// program name: none pauses (Run); `scrub DIR` and `delete PATH` reclaim a volume and
// exit 0 when done, 1 with a line on stderr when not, 2 on a usage error.
func Main(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		return Run(stderr)
	}
	if len(args) != 2 || (args[0] != Scrub && args[0] != Delete) {
		_, _ = io.WriteString(stderr, "usage: pause [scrub DIR | delete PATH]\n")
		return 2
	}
	var err error
	if args[0] == Scrub {
		err = ScrubDir(args[1])
	} else {
		err = DeletePath(args[1])
	}
	if err != nil {
		_, _ = io.WriteString(stderr, "pause: "+args[0]+": "+err.Error()+"\n")
		return 1
	}
	return 0
}

// ScrubDir removes every entry of dir, dot-files included, and checks that dir is
// then empty. The directory itself stays.
func ScrubDir(dir string) error {
	if err := checkPath(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return errors.New(dir + " is not empty after scrubbing: " + left[0].Name() + " is left")
	}
	return nil
}

// DeletePath removes path and everything under it; a missing path is no error.
func DeletePath(path string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		return errors.New(path + " is still there after deleting it")
	}
	return nil
}

// checkPath refuses what no volume is: an empty, relative or root path.
func checkPath(p string) error {
	if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
		return errors.New("refusing path " + quote(p) + ": want an absolute path other than /")
	}
	return nil
}

// quote quotes s without fmt or strconv (the pause image stays small).
func quote(s string) string { return "\"" + s + "\"" }

package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// startupProfile is a CPU profile of the server's start (--startup-cpu-profile): it
// begins before the store opens and ends a while after the API is served, so that a
// restart's cost (loading the store, spawning actors, the feeds catching up) can be
// read from one file.
type startupProfile struct {
	f    *os.File
	once sync.Once
}

// startStartupProfile starts a CPU profile into path; an empty path profiles nothing.
func startStartupProfile(path string) (*startupProfile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("startup cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("startup cpu profile: %w", err)
	}
	return &startupProfile{f: f}, nil
}

// stop ends the profile and closes its file; it is safe on nil and to call twice.
func (p *startupProfile) stop() error {
	if p == nil {
		return nil
	}
	var err error
	p.once.Do(func() {
		pprof.StopCPUProfile()
		err = p.f.Close()
	})
	return err
}

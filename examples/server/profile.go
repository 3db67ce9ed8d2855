package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// cpuProfile is the -cpuprofile of a running server: a CPU profile
// (go tool pprof) of the serving, from the moment the server listens until
// it stops cleanly (SIGTERM or SIGINT). The file is created when the server
// starts, so that a path it cannot write is refused at once rather than
// found out at the end; a server killed with SIGKILL leaves it empty.
type cpuProfile struct {
	f    *os.File
	once sync.Once
	err  error
}

// openCPUProfile creates the profile's file; "" is no profile (nil).
func openCPUProfile(path string) (*cpuProfile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return &cpuProfile{f: f}, nil
}

// start starts the profiling.
func (p *cpuProfile) start() error {
	if p == nil {
		return nil
	}
	if err := pprof.StartCPUProfile(p.f); err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	return nil
}

// stop ends the profiling and closes the file; later calls return the
// first one's error.
func (p *cpuProfile) stop() error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		pprof.StopCPUProfile() // a no-op when start was not reached
		p.err = errors.Join(p.f.Sync(), p.f.Close())
		if p.err != nil {
			p.err = fmt.Errorf("-cpuprofile: %w", p.err)
		}
	})
	return p.err
}

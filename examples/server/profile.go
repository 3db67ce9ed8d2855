package main

import (
	"errors"
	"fmt"
	"io"
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
	// Opened without truncating: a file already there is replaced only
	// when it is an earlier profile (pprof writes gzip data) or empty. A
	// mistyped path naming the ledger, the accounts file or a key must
	// refuse the start, not empty that file before anything is checked.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := replaceableProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w; name a new file, nothing was changed", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return &cpuProfile{f: f}, nil
}

// replaceableProfile tells whether the file f, just opened, may be
// replaced by a profile: a regular file that is empty (new) or holds gzip
// data (an earlier profile).
func replaceableProfile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("is not a regular file")
	}
	if fi.Size() == 0 {
		return nil
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if magic != [2]byte{0x1f, 0x8b} {
		return fmt.Errorf("exists and is not a CPU profile (%d bytes, not gzip data)", fi.Size())
	}
	return nil
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

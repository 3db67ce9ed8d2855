//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path (created if missing) and returns
// its release: the accounts commands hold it around their
// read-modify-write of the accounts file, so two commands run at once do
// not lose one another's change. The server only reads the file (it is
// replaced whole by a rename) and needs no lock for that.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// errHeld: another process holds the lock tryLockFile asked for.
var errHeld = errors.New("locked by another process")

// tryLockFile takes an exclusive lock on an existing file without waiting:
// errHeld when another process holds it (a running server holds its
// ledger's, bbolt's flock), os.ErrNotExist when there is no file.
func tryLockFile(path string) (func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errHeld
		}
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

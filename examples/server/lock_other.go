//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package main

// lockFile takes no lock where flock(2) does not exist: there, run one
// accounts command at a time. The file is still replaced whole by a rename,
// so a reader never sees half of it.
func lockFile(path string) (func(), error) { return func() {}, nil }

// tryLockFile takes no lock where flock(2) does not exist: there, stop the
// server before -rotate-receipt-key.
func tryLockFile(path string) (func(), error) { return func() {}, nil }

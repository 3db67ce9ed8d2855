//go:build !linux

package faultfs

import (
	"errors"
	"io"
)

// Serve is Linux's only: the FUSE loopback and lazy unmounts this package
// relies on are Linux's.
func Serve(backing, disk, dir string, in io.Reader, out io.Writer) error {
	return errors.New("faultfs: FUSE fault injection runs on Linux only")
}

// detach has nothing to do where nothing is mounted.
func detach(string) {}

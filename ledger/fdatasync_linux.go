package ledger

import (
	"os"
	"syscall"
)

// fdatasyncFile is what bbolt calls on Linux to make a commit durable; the
// journal syncs its files the same way.
func fdatasyncFile(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

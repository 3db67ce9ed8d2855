package ledger

import (
	"os"
	"syscall"
)

// fdatasync is what bbolt calls on Linux to make a commit durable
// (BenchmarkRawWAL syncs its file as bbolt syncs its own).
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

//go:build !linux

package ledger

import "os"

// fdatasync is fsync where bbolt has no fdatasync (BenchmarkRawWAL).
func fdatasync(f *os.File) error { return f.Sync() }

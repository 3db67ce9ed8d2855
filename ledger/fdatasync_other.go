//go:build !linux

package ledger

import "os"

// fdatasyncFile is fsync where bbolt has no fdatasync.
func fdatasyncFile(f *os.File) error { return f.Sync() }

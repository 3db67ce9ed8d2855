//go:build windows || plan9 || solaris || aix || android

package ledger

import (
	"errors"
	"os"
	"time"
)

var errLocked = errors.New("file locked by another process or open Ledger")

// flockLocks: lockFile takes no lock here, so no store keeps a journal
// (its recovery writes the file before bbolt locks it).
const flockLocks = false

// lockFile opens the file without a lock on systems where bbolt's lock is
// not flock: the structural check then runs unlocked, and bbolt's own
// lock still keeps a second writer out.
func lockFile(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	return os.Open(path)
}

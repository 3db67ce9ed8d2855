//go:build windows || plan9 || solaris || aix || android

package ledger

import (
	"errors"
	"os"
	"time"
)

var errLocked = errors.New("file locked by another process or open Ledger")

// lockFile opens the file without a lock on systems where bbolt's lock is
// not flock: the structural check then runs unlocked, and bbolt's own
// lock still keeps a second writer out.
func lockFile(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	return os.Open(path)
}

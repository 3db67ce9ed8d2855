//go:build !windows && !plan9 && !solaris && !aix && !android

package ledger

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errLocked: another process (or open Ledger) holds the file's lock.
var errLocked = errors.New("file locked by another process or open Ledger")

// flockLocks: lockFile takes bbolt's own lock (a journal's recovery needs it).
const flockLocks = true

// lockFile takes the advisory lock bbolt takes (flock, exclusive for a
// writer, shared for a reader) on its own descriptor, waiting at most
// timeout, so that the structural check before bbolt opens the file does
// not read a file another writer is changing. bbolt's lock is taken on its
// own descriptor, and flock locks of two descriptors conflict, so the
// caller closes f before bbolt opens the file.
func lockFile(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	flag := os.O_RDONLY
	if exclusive {
		flag = os.O_RDWR // a writer's lock: the journal's recovery writes
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errLocked
		}
		time.Sleep(50 * time.Millisecond)
	}
}

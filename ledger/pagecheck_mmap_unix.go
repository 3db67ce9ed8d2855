//go:build !windows && !plan9 && !js && !wasip1

package ledger

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only, so that the page walk
// reads page headers without copying pages; the caller guards the reads
// with panic-on-fault. It returns nil (and the walk reads with ReadAt) when
// the file cannot be mapped.
func mapFile(f *os.File, size int64) ([]byte, func()) {
	if size <= 0 || int64(int(size)) != size {
		return nil, func() {}
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, func() {}
	}
	return m, func() { syscall.Munmap(m) }
}

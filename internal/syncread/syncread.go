package syncread

import (
	"io"
	"sync"
)

// Reader reads its source under a mutex, held only while it reads.
type Reader struct {
	mu  sync.Mutex
	src io.Reader
}

// New returns r behind a mutex.
func New(r io.Reader) *Reader { return &Reader{src: r} }

// Read fills b whole (io.ReadFull) in one hold of the lock, so that the
// bytes of one caller's read are consecutive bytes of the source.
func (r *Reader) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return io.ReadFull(r.src, b)
}

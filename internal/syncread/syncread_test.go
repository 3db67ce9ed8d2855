package syncread

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shortReader is not safe for concurrent use: it counts the reads that
// overlapped another, and gives at most 3 bytes a call (a legal short
// read) from a counter, so that each byte says where in the stream it was.
type shortReader struct {
	busy     atomic.Bool
	overlaps atomic.Int64
	next     byte
}

func (r *shortReader) Read(p []byte) (int, error) {
	if !r.busy.CompareAndSwap(false, true) {
		r.overlaps.Add(1)
	} else {
		defer r.busy.Store(false)
	}
	time.Sleep(10 * time.Microsecond)
	n := min(len(p), 3)
	for i := range n {
		p[i] = r.next
		r.next++
	}
	return n, nil
}

// TestReadsOneAtATimeAndWhole: readers in parallel never overlap on the
// source, and each gets its whole buffer of consecutive source bytes.
func TestReadsOneAtATimeAndWhole(t *testing.T) {
	src := &shortReader{}
	r := New(src)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b := make([]byte, 10)
			for range 50 {
				if n, err := r.Read(b); n != len(b) || err != nil {
					t.Errorf("Read = %d, %v, want %d, nil", n, err, len(b))
					return
				}
				for i := 1; i < len(b); i++ {
					if b[i] != b[i-1]+1 {
						t.Errorf("bytes %v are not consecutive bytes of the source", b)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n := src.overlaps.Load(); n != 0 {
		t.Fatalf("%d reads of the source overlapped another", n)
	}
}

// TestReadPassesErrors: a source that ends short gives io.ErrUnexpectedEOF
// with the bytes it had, as io.ReadFull does.
func TestReadPassesErrors(t *testing.T) {
	b := make([]byte, 4)
	n, err := New(bytes.NewReader([]byte{1, 2})).Read(b)
	if n != 2 || err != io.ErrUnexpectedEOF {
		t.Fatalf("Read = %d, %v, want 2, io.ErrUnexpectedEOF", n, err)
	}
}

package fiscal_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// exclusiveReader is a Config.Rand that is not safe for concurrent use (as
// Config allows) and counts the reads that overlapped another one.
type exclusiveReader struct {
	busy     atomic.Bool
	overlaps atomic.Int64
	src      fiscaltest.Rand
}

func (r *exclusiveReader) Read(p []byte) (int, error) {
	if !r.busy.CompareAndSwap(false, true) {
		r.overlaps.Add(1)
		return r.src.Read(p)
	}
	defer r.busy.Store(false)
	time.Sleep(20 * time.Microsecond) // a read that takes a while: overlaps show
	return r.src.Read(p)
}

// TestRandReadOneAtATime: the engine and the accessories it hands its
// configuration to (Settings: webhooks, the sandbox engine) read
// Config.Rand one at a time, under one lock, while settlements draw their
// salts from it concurrently.
func TestRandReadOneAtATime(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC), irishSeller)
	x := &exclusiveReader{}
	cfg.Rand = x
	e := fiscaltest.Engine(t, cfg)
	books := fiscaltest.Books(t, e, 0)
	shared := e.Settings().Rand
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				if _, err := books.Settle(context.Background(), request(g*100+i, "1.00", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			var b [16]byte
			for range 100 {
				if _, err := io.ReadFull(shared, b[:]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := x.overlaps.Load(); n != 0 {
		t.Fatalf("%d reads of Config.Rand overlapped another: the engine and Settings().Rand do not share one lock", n)
	}
}

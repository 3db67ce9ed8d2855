package vies

import (
	"context"
	"sync"
)

// flight collapses concurrent lookups of the same number into one registry
// call: a burst of identical checks (one buyer paying for many requests at
// once, the x402 pattern) costs the registry one request, not fifty.
type flight struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	res  flightResult
}

// flightResult is what a shared call produced. abandoned marks a result
// that only says the calling goroutine's own context ended (canceled, or
// its deadline passed): it is no answer for the others that waited.
type flightResult struct {
	r         Result
	abandoned bool
}

// do runs fn for key unless a call for key is already in flight, in which
// case it waits for that call (joined = true). err is ctx.Err() when ctx
// ended while waiting.
func (f *flight) do(ctx context.Context, key string, fn func() flightResult) (res flightResult, joined bool, err error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[string]*flightCall)
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.res, true, nil
		case <-ctx.Done():
			return flightResult{}, true, ctx.Err()
		}
	}
	c := &flightCall{done: make(chan struct{})}
	// Should fn panic, the waiters must not take the zero result for an
	// answer.
	c.res.abandoned = true
	f.calls[key] = c
	f.mu.Unlock()

	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.res = fn()
	return c.res, false, nil
}

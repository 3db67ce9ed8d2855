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
	r    Result
}

// do runs fn for key unless a call for key is already running, in which
// case it waits for that call's result (shared = true) or for ctx to end.
func (f *flight) do(ctx context.Context, key string, fn func() Result) (r Result, shared bool) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[string]*flightCall)
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.r, true
		case <-ctx.Done():
			return Result{Status: StatusUnavailable, Fault: FaultCanceled}, true
		}
	}
	c := &flightCall{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()

	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.r = fn()
	return c.r, false
}

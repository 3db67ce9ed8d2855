package fiscaltest

import (
	"context"
	"sync"

	"github.com/fiscal402/fiscal402/vies"
)

// Hook is a one-shot hook: Once sets it, Fire runs it (the first Fire
// after Once) and clears it. Safe for concurrent use; a fake source embeds
// it to let a test commit something while the engine waits on it.
type Hook struct {
	mu sync.Mutex
	fn func()
}

// Once makes the next Fire run fn.
func (h *Hook) Once(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fn = fn
}

// Fire runs and clears the hook Once set, if any.
func (h *Hook) Fire() {
	h.mu.Lock()
	fn := h.fn
	h.fn = nil
	h.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// HookVIES is a fake registry that runs a hook (once) while it is asked,
// before it answers: a test's way to commit something (a person's
// resolution, another re-check pass) while the engine waits on the
// registry.
type HookVIES struct {
	*vies.Fake
	Hook
}

// NewHookVIES is a HookVIES over an empty fake registry.
func NewHookVIES() *HookVIES { return &HookVIES{Fake: vies.NewFake()} }

// Check runs the hook set by Once, if any, then answers as the fake does.
func (h *HookVIES) Check(ctx context.Context, number string) vies.Result {
	h.Fire()
	return h.Fake.Check(ctx, number)
}

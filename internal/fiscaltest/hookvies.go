package fiscaltest

import (
	"context"
	"sync"

	"github.com/fiscal402/fiscal402/vies"
)

// HookVIES is a fake registry that runs a hook (once) while it is asked,
// before it answers: a test's way to commit something (a person's
// resolution, another re-check pass) while the engine waits on the
// registry.
type HookVIES struct {
	*vies.Fake
	mu   sync.Mutex
	hook func()
}

// NewHookVIES is a HookVIES over an empty fake registry.
func NewHookVIES() *HookVIES { return &HookVIES{Fake: vies.NewFake()} }

// Once makes the next Check run hook first.
func (h *HookVIES) Once(hook func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hook = hook
}

// Check runs the hook set by Once, if any, then answers as the fake does.
func (h *HookVIES) Check(ctx context.Context, number string) vies.Result {
	h.mu.Lock()
	hook := h.hook
	h.hook = nil
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	return h.Fake.Check(ctx, number)
}

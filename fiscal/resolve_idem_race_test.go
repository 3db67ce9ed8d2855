package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vies"
)

// hookFX is a rate source that runs a hook (once) when asked, before it
// answers: a test's way to commit something while a decision is made.
type hookFX struct {
	fx.Source
	fiscaltest.Hook
}

func (h *hookFX) Rate(ctx context.Context, quote string, at time.Time, p fx.Policy) (fx.Rate, error) {
	h.Fire()
	return h.Source.Rate(ctx, quote, at, p)
}

// TestResolveKeyReusedConcurrently: two resolutions of one record carry
// the same Idempotency-Key with different bodies, at once. However their
// steps interleave, the second is told that the key was used with another
// body (IDEMPOTENCY_CONFLICT), as it would be had it come after, never
// that the record is no longer pending: (a) the first commits while the
// second is being decided (here: while it converts the amount); (b) the
// first commits after the second found the key free but before it read
// the record; (c) the second comes after the first.
func TestResolveKeyReusedConcurrently(t *testing.T) {
	embedded, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	rates := &hookFX{Source: embedded}
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	fake := vies.NewFake()
	fake.Set(recheckNumber, recheckBusy)
	cfg.VIES, cfg.FX = fake, rates
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	consumer := func(by string) fiscal.Resolution {
		return fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: by}
	}
	pending := func(n int) string {
		req := request(n, "100.00", "DE", "2026-04-10T14:30:00Z")
		req.ConsumerVATNumber = recheckNumber
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		return res.Record.ID
	}
	want := func(what string, err error) {
		t.Helper()
		if code := fiscaltest.Code(err); code != fiscal.CodeIdempotencyConflict {
			t.Errorf("%s: %v (%s), want IDEMPOTENCY_CONFLICT", what, err, code)
		}
	}

	id := pending(1)
	rates.Once(func() {
		if _, err := b.Resolve(ctx, id, consumer("ops-1"), "resolve-a"); err != nil {
			t.Errorf("first resolution: %v", err)
		}
	})
	_, err = b.Resolve(ctx, id, consumer("ops-2"), "resolve-a")
	want("(a) the first committed while the second was decided", err)

	id = pending(2)
	if _, err := b.Resolve(ctx, id, consumer("ops-1"), "resolve-b"); err != nil {
		t.Fatal(err)
	}
	_, err = b.ResolveAfterLookup(ctx, id, consumer("ops-2"), "resolve-b")
	want("(b) the first committed between the second's key lookup and its reading of the record", err)

	_, err = b.Resolve(ctx, id, consumer("ops-3"), "resolve-b")
	want("(c) the key reused after the resolution", err)
}

package fiscal_test

import (
	"context"
	"errors"
	"github.com/fiscal402/fiscal402/ledger"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// gateFX is the embedded ECB table, except that the first lookup for the
// instant gate waits until release is closed (announcing itself on
// entered): it holds one Settle between its look-up of the claims and its
// commit. Later lookups (the same sale decided again) pass.
type gateFX struct {
	fx.Source
	gate    time.Time
	entered chan struct{}
	release chan struct{}
	held    atomic.Bool
}

// settled is what one Settle answered.
type settled struct {
	res *fiscal.SettleResult
	err error
}

// gatedEngine is an engine of seller whose rate lookups for gate wait the
// first time (gateFX), and its books.
func gatedEngine(t *testing.T, seller fiscal.Seller, gate time.Time) (*fiscal.Engine, *fiscal.Books, *gateFX) {
	t.Helper()
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller)
	table, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	g := &gateFX{Source: table, gate: gate, entered: make(chan struct{}), release: make(chan struct{})}
	cfg.FX = g
	e := fiscaltest.Engine(t, cfg)
	return e, fiscaltest.Books(t, e, 0), g
}

func (g *gateFX) Rate(ctx context.Context, quote string, at time.Time, p fx.Policy) (fx.Rate, error) {
	if at.Equal(g.gate) && g.held.CompareAndSwap(false, true) {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.Source.Rate(ctx, quote, at, p)
}

// TestBoundKeyRacesItsClaim: an Idempotency-Key K first answered with an
// existing record (bound to it) while a new payment under the same K is
// between its look-up and its commit. Sequentially the second of the two
// is IDEMPOTENCY_CONFLICT; a review found both answered (K bound to one
// record and claimed by another), and a retry of the request answered 200
// Existing then refused. The append now checks the binding in the
// committer, and each request's retry answers what it was answered.
func TestBoundKeyRacesItsClaim(t *testing.T) {
	_, b, g := gatedEngine(t, fiscaltest.IrishSeller, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	ctx := context.Background()

	first := fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z")
	orig, err := b.Settle(ctx, first, "")
	if err != nil {
		t.Fatal(err)
	}
	// C: a new payment under key K, held after its look-up of the ledger.
	other := fiscaltest.Request(2, "5.00", "FR", "2026-03-02T09:00:00Z")
	done := make(chan settled, 1)
	go func() {
		res, err := b.Settle(ctx, other, "K")
		done <- settled{res, err}
	}()
	<-g.entered
	// A: the first payment again under K: 200 Existing, K bound to it.
	dup, err := b.Settle(ctx, first, "K")
	if err != nil || dup.Outcome != fiscal.Existing || dup.Record.ID != orig.Record.ID {
		t.Fatalf("duplicate under K: %v %v", dup, err)
	}
	close(g.release)
	c := <-done
	// A sequential execution (A then C) answers C with IDEMPOTENCY_CONFLICT.
	if c.err == nil {
		t.Errorf("the new payment under K, already bound to %s, was answered %v with %s", orig.Record.ID, c.res.Outcome, c.res.Record.ID)
	}
	// A retry of C must answer what C was answered.
	if c.err == nil {
		againC, err := b.Settle(ctx, other, "K")
		if err != nil || againC.Record.ID != c.res.Record.ID {
			t.Errorf("retry of the request answered %v %s under K: %v %v", c.res.Outcome, c.res.Record.ID, againC, err)
		}
	}
	// A retry of A must answer what A was answered.
	again, err := b.Settle(ctx, first, "K")
	if err != nil || again.Record.ID != dup.Record.ID {
		t.Errorf("retry of the request answered 200 Existing %s under K: %v %v", dup.Record.ID, again, err)
	}
}

// TestBindingRacesACommittingClaim: the other order. A new payment under
// key K is inside the committer (its claim of K not yet committed) when a
// duplicate of an existing payment arrives under K, finds K free and binds
// it. Sequentially the binding comes second and is IDEMPOTENCY_CONFLICT;
// the binding now looks at the claim again inside its write transaction,
// which waits for the commit.
func TestBindingRacesACommittingClaim(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	first := fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z")
	orig, err := b.Settle(ctx, first, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := fiscaltest.Request(2, "5.00", "FR", "2026-04-10T14:30:00Z").Payment(e.Now())
	if err != nil {
		t.Fatal(err)
	}
	inCommit, release := make(chan struct{}), make(chan struct{})
	newer := make(chan settled, 1)
	go func() {
		res, err := b.SettlePayment(ctx, p, fiscal.Verification{}, func(d *fiscal.Draft) {
			d.ClaimPayment("K", p.Fingerprint())
			d.OnCommit(nil, func(*ledger.Hook) error { close(inCommit); <-release; return nil })
		})
		newer <- settled{res, err}
	}()
	<-inCommit
	dup := make(chan settled, 1)
	go func() {
		res, err := b.Settle(ctx, first, "K")
		dup <- settled{res, err}
	}()
	// The duplicate looks K up while the claim is uncommitted and then
	// waits for the ledger's writer (a shorter wait only lets it look
	// later, when the claim is committed: a conflict either way).
	time.Sleep(100 * time.Millisecond)
	close(release)
	n := <-newer
	if n.err != nil || n.res.Outcome != fiscal.Created {
		t.Fatalf("the new payment under K: %v %v", n.res, n.err)
	}
	d := <-dup
	var fe *fiscal.Error
	if !errors.As(d.err, &fe) || fe.Code != fiscal.CodeIdempotencyConflict {
		var got string
		if d.res != nil {
			got = d.res.Record.ID
		}
		t.Fatalf("the duplicate of %s under K, claimed meanwhile by %s: %v %s %v, want IDEMPOTENCY_CONFLICT", orig.Record.ID, n.res.Record.ID, d.res, got, d.err)
	}
	if again, err := b.SettlePayment(ctx, p, fiscal.Verification{}, func(d *fiscal.Draft) { d.ClaimPayment("K", p.Fingerprint()) }); err != nil || again.Record.ID != n.res.Record.ID {
		t.Fatalf("a retry of the new payment under K: %v %v, want %s", again, err, n.res.Record.ID)
	}
}

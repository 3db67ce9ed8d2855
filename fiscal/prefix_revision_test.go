package fiscal_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestPrefixSuppliedNoteKeptOnRevision: a German business gives its VAT
// number without the prefix ("136695976"); the engine reads it as
// DE136695976 and revision 1 notes vat_number_prefix_supplied. The registry
// is busy at the sale, so the record waits for a re-check. Every later
// revision (the re-check that confirms the number, a person's resolution)
// is decided again from the record: a review found that the record held
// only the qualified number, so revision 2 no longer said that the prefix
// came from the engine, not from the customer, and an auditor reading the
// current revision lost that fact. Each revision must keep the note, with
// the number as the customer gave it.
func TestPrefixSuppliedNoteKeptOnRevision(t *testing.T) {
	settle := func(t *testing.T) (*fiscal.Engine, *fiscal.Books, *fiscaltest.HookVIES, *fiscal.Record, func(time.Duration)) {
		var mu sync.Mutex
		now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
		cfg := fiscaltest.Config(t, now, irishSeller)
		cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		fake := fiscaltest.NewHookVIES()
		fake.Set(recheckNumber, recheckBusy)
		cfg.VIES = fake
		cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
		e := fiscaltest.Engine(t, cfg)
		b := fiscaltest.Books(t, e, 0)
		req := request(1, "100.00", "DE", "2026-04-10T14:30:00Z")
		req.ConsumerVATNumber = "136695976"
		req.ConsumerName = "Beispiel GmbH"
		req.ConsumerAddress = &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}
		res, err := b.Settle(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.ReviewStatus != fiscal.StatusPendingReview || r.Buyer.VATNumber != recheckNumber {
			t.Fatalf("revision 1: %s, number %q; want pending review of %s", r.ReviewStatus, r.Buyer.VATNumber, recheckNumber)
		}
		checkNote(t, r)
		return e, b, fake, r, func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	}
	ctx := context.Background()
	t.Run("registry re-check", func(t *testing.T) {
		e, b, fake, rec, advance := settle(t)
		advance(2 * time.Minute)
		fake.Set(recheckNumber, recheckValid)
		if n, err := e.RecheckNow(ctx); err != nil || n != 1 {
			t.Fatalf("RecheckNow: %d revised, %v; want 1", n, err)
		}
		r, _, err := b.Record(ctx, rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision != 2 || r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeReverseChargeB2B || r.Buyer.VATNumber != recheckNumber {
			t.Fatalf("revision %d: %s %s, number %q; want revision 2 processed under the reverse charge, %s", r.Revision, r.ReviewStatus, r.Classification.Regime, r.Buyer.VATNumber, recheckNumber)
		}
		checkNote(t, r)
	})
	t.Run("resolution", func(t *testing.T) {
		_, b, fake, rec, _ := settle(t)
		fake.Set(recheckNumber, recheckValid)
		res, err := b.Resolve(ctx, rec.ID, fiscal.Resolution{ResolvedBy: "ops-1", Buyer: &fiscal.ResolutionBuyer{Name: "Beispiel Handels GmbH"}}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.Revision != 2 || r.ReviewStatus != fiscal.StatusProcessed || r.Buyer.VATNumber != recheckNumber {
			t.Fatalf("revision %d: %s, number %q; want revision 2 processed, %s (%v)", r.Revision, r.ReviewStatus, r.Buyer.VATNumber, recheckNumber, r.ReviewReasons)
		}
		checkNote(t, r)
	})
	t.Run("resolution moving the buyer", func(t *testing.T) {
		// A person corrects the buyer's country: the number stays the one
		// the customer's prefix-less digits were read as under the country
		// given with them, the one the registry answered about, not the
		// digits read again under the new country.
		_, b, fake, rec, _ := settle(t)
		fake.Set(recheckNumber, recheckValid)
		res, err := b.Resolve(ctx, rec.ID, fiscal.Resolution{ResolvedBy: "ops-1", Buyer: &fiscal.ResolutionBuyer{Country: "AT"}}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.Buyer.VATNumber != recheckNumber || r.Buyer.VATNumberAsGiven != "" || r.Buyer.Registry == nil ||
			r.Buyer.Registry.CountryCode+r.Buyer.Registry.Number != recheckNumber {
			t.Fatalf("revision %d: number %q (given %q), registry %+v; want %s and the registry's answer about it", r.Revision,
				r.Buyer.VATNumber, r.Buyer.VATNumberAsGiven, r.Buyer.Registry, recheckNumber)
		}
	})
}

// checkNote fails t unless r's determination notes that the prefix of
// "136695976" was supplied.
func checkNote(t *testing.T, r *fiscal.Record) {
	t.Helper()
	i := slices.IndexFunc(r.Classification.Reasons, func(x vat.Reason) bool { return x.Code == vat.ReasonVATNumberPrefixSupplied })
	if i < 0 {
		t.Fatalf("revision %d: reasons %v; want the note %s", r.Revision, codes(r.Classification.Reasons), vat.ReasonVATNumberPrefixSupplied)
	}
	if d := r.Classification.Reasons[i].Detail; !strings.Contains(d, "136695976") || !strings.Contains(d, "DE136695976") {
		t.Fatalf("revision %d: note %q; want it to name the number as given and as read", r.Revision, d)
	}
	if r.Buyer.VATNumberAsGiven != "136695976" {
		t.Fatalf("revision %d: number as given %q; want 136695976", r.Revision, r.Buyer.VATNumberAsGiven)
	}
}

package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestFiscalEventPrefixlessNumber: a B2B fiscal event whose German buyer
// gave its VAT number without the prefix DE. The registry is asked about
// DE136695976 and the event states that number (the one its determination,
// receipt and invoice speak of); when the registry could not answer, the
// re-check of that number revises the event as it does one given with the
// prefix, and a retry of the request with its Idempotency-Key replays it.
func TestFiscalEventPrefixlessNumber(t *testing.T) {
	const number, given = "DE136695976", "136 695 976"
	fake := vies.NewFake()
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond}
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(1, given), "prefixless-1")
	if err != nil {
		t.Fatal(err)
	}
	if fake.Calls(number) != 1 {
		t.Errorf("the registry was asked %d times about %s; want once", fake.Calls(number), number)
	}
	if ev := res.Event; ev.Buyer.VATNumber != number || ev.Buyer.VATNumberAsGiven != given || !hasReason(ev.Determination.Reasons, vat.ReasonVATNumberPrefixSupplied) || !hasReason(ev.Determination.Reasons, vat.ReasonVATNumberUnverified) {
		t.Fatalf("recorded: number %q, reasons %v; want %s unverified, its prefix supplied", ev.Buyer.VATNumber, ev.Determination.Reasons, number)
	}
	again, err := events.Record(ctx, acct, b2bEvent(1, given), "prefixless-1")
	if err != nil || again.Event.ID != res.Event.ID || again.Outcome != fiscal.Replayed {
		t.Fatalf("retry with its key: %v %+v", err, again)
	}
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-ev", RequestDate: now,
		Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	if n, err := e.RecheckNow(ctx); err != nil || n != 1 {
		t.Fatalf("RecheckNow: %d %v; want the event revised", n, err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Regime != vat.RegimeReverseChargeB2B || ev.Buyer.VATNumber != number {
		t.Fatalf("after the registry answered: revision %d %s %q", ev.Revision, ev.Determination.Regime, ev.Buyer.VATNumber)
	}
	// The revision is decided again from the stored event: it must still
	// say that the prefix was the engine's reading, not the customer's.
	if !hasReason(ev.Determination.Reasons, vat.ReasonVATNumberPrefixSupplied) || ev.Buyer.VATNumberAsGiven != given {
		t.Fatalf("revision 2: reasons %v, number as given %q; want the note %s and %q", ev.Determination.Reasons, ev.Buyer.VATNumberAsGiven, vat.ReasonVATNumberPrefixSupplied, given)
	}
}

func hasReason(rs []vat.Reason, code string) bool {
	for _, r := range rs {
		if r.Code == code {
			return true
		}
	}
	return false
}

package fiscalevent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// b2bEvent is fiscal event n of the account's own seller to a business in
// Germany with the VAT number given.
func b2bEvent(n int, number string) fiscalevent.Request {
	req := request(n, "100.00", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	req.Buyer.BusinessStatus, req.Buyer.VATNumber = "B2B", number
	return req
}

// TestFiscalEventRecheck: a business buyer's VAT number the registry could
// not confirm leaves the event for review; when the registry answers, the
// engine's re-check revises the event: reverse charge, a production receipt
// and invoice, revision 2 with its history; the first entry stays.
func TestFiscalEventRecheck(t *testing.T) {
	fake := vies.NewFake()
	const number = "DE136695976"
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond}
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx := context.Background()
	res, err := events.Record(ctx, fiscaltest.AccountID(0), b2bEvent(1, number), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev := res.Event; ev.Determination.Status != vat.StatusManualReview || ev.Receipt != nil {
		t.Fatalf("before: %s %v", ev.Determination.Status, ev.Determination.Reasons)
	}
	if q, _ := e.Queues(); q.Rechecks != 1 {
		t.Fatalf("%d re-checks queued, want 1", q.Rechecks)
	}
	// The registry's answer carries the name and address the reverse
	// charge invoice must state (Art. 226(5)); the event was given no
	// address of its own.
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-ev", RequestDate: now,
		Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	if n, err := e.RecheckNow(ctx); err != nil || n != 1 {
		t.Fatalf("RecheckNow: %d %v", n, err)
	}
	ev, _, err := events.Get(ctx, fiscaltest.AccountID(0), res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Regime != vat.RegimeReverseChargeB2B || !ev.Production.Receipt || ev.Receipt == nil || ev.Invoice == nil {
		t.Fatalf("after: revision %d %s production %v", ev.Revision, ev.Determination.Regime, ev.Production.Receipt)
	}
	if len(ev.History) != 2 || ev.History[0].EventType != fiscalevent.EventRecorded || ev.History[1].Cause != fiscal.CauseRegistryRecheck {
		t.Errorf("history %+v", ev.History)
	}
	if q, _ := e.Queues(); q.Rechecks != 0 {
		t.Errorf("%d re-checks still queued", q.Rechecks)
	}
	doc, err := e.Receipt(ctx, ev.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := e.JWKS()
	if _, err := receipt.Verify(doc, jwks, e.LogVerifierKey()); err != nil {
		t.Fatalf("revision receipt: %v", err)
	}
}

// TestFiscalEventResolve: a person states that the unconfirmed business is
// a consumer; the event is revised, determined, with a production receipt;
// a resolved event cannot be resolved again; another account's event is not
// found.
func TestFiscalEventResolve(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller, fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(2, "DE136695976"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Determination.Status != vat.StatusManualReview {
		t.Fatalf("before: %s", res.Event.Determination.Status)
	}
	if _, err := events.Resolve(ctx, fiscaltest.AccountID(1), res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "x"}, ""); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Errorf("another account: %v", err)
	}
	got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, "ev-res")
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Event
	if got.Outcome != fiscal.Created || ev.Revision != 2 || ev.Determination.Regime != vat.RegimeOSSB2C || ev.Buyer.VATNumber != "" || !ev.Production.Receipt {
		t.Fatalf("after: %v revision %d %s %q %v", got.Outcome, ev.Revision, ev.Determination.Regime, ev.Buyer.VATNumber, ev.Production)
	}
	if ev.History[1].ResolvedBy != "ops-1" {
		t.Errorf("history %+v", ev.History)
	}
	again, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, "ev-res")
	if err != nil || again.Outcome != fiscal.Replayed {
		t.Errorf("replay: %v %v", again, err)
	}
	if _, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, ResolvedBy: "ops-1"}, ""); fiscaltest.Code(err) != fiscal.CodeRecordNotPending {
		t.Errorf("resolving a determined event: %v", err)
	}
}

// TestFiscalEventInvoiceNotIssuable: a confirmed business whose registry
// discloses no address meets every other invariant, but its reverse-charge
// invoice would lack the customer's address (Art. 226(5)): the event is
// stored with invoice_issuable failing, without receipt or invoice, and
// says why; nothing answers 500.
func TestFiscalEventInvoiceNotIssuable(t *testing.T) {
	_, events, ev := addressless(t)
	inv := ev.Production.Invariants[len(ev.Production.Invariants)-1]
	if ev.Determination.Regime != vat.RegimeReverseChargeB2B || ev.Production.Receipt || ev.Receipt != nil || ev.Invoice != nil ||
		inv.Code != fiscalevent.InvariantInvoiceIssuable || inv.Holds || !strings.Contains(inv.Detail, invoicelaw.ReasonBuyerAddressMissing) {
		t.Fatalf("event %s production %+v receipt %v invoice %v", ev.Determination.Regime, ev.Production, ev.Receipt, ev.Invoice)
	}
	if _, _, err := events.Get(context.Background(), fiscaltest.AccountID(0), ev.ID); err != nil {
		t.Fatalf("the event was not stored: %v", err)
	}
}

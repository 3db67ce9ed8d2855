package fiscalevent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/vat"
)

// contradicted records a fiscal event of a German business whose VAT
// number is unconfirmed, then resolves it with location evidence that
// contradicts itself (DE and FR), so that the event stays for review with
// the evidence recorded.
func contradicted(t *testing.T) (*fiscalevent.Service, string) {
	t.Helper()
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(5, "DE136695976"), "")
	if err != nil {
		t.Fatal(err)
	}
	evidence := []vat.Evidence{
		{Kind: vat.EvidenceIPAddress, Country: "DE", Source: vat.EvidenceSourceMerchant},
		{Kind: vat.EvidenceBillingAddress, Country: "FR", Source: vat.EvidenceSourceCustomer},
	}
	first, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Evidence: evidence}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Event.Buyer.Evidence) != 2 {
		t.Fatalf("setup: evidence on the event %v", first.Event.Buyer.Evidence)
	}
	return events, res.Event.ID
}

// resolution decodes a resolution body as the HTTP server does
// (strictjson, which keeps [] apart from an absent member).
func resolution(t *testing.T, body string) fiscal.Resolution {
	t.Helper()
	var r fiscal.Resolution
	if err := strictjson.Decode([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFiscalEventResolutionClearsEvidence: locationEvidence [] in a
// resolution clears the evidence a previous resolution stated (absent keeps
// it: TestFiscalEventResolutionKeepsEvidence), as an empty list means none
// elsewhere in the API: the consumer is then decided on the country stated
// alone, no longer on the contradictory items.
func TestFiscalEventResolutionClearsEvidence(t *testing.T) {
	events, id := contradicted(t)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	got, err := events.Resolve(ctx, acct, id, resolution(t, `{"buyer":{"businessStatus":"B2C","locationEvidence":[]},"resolvedBy":"ops-1"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Event
	if len(ev.Buyer.Evidence) != 0 {
		t.Fatalf("locationEvidence [] kept the evidence: %v", ev.Buyer.Evidence)
	}
	if slices.ContainsFunc(ev.Determination.Reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonLocationEvidenceContradictory }) ||
		ev.Determination.Status != vat.StatusDetermined || ev.Determination.Regime != vat.RegimeOSSB2C {
		t.Fatalf("decided on the cleared evidence: %s %s %v", ev.Determination.Status, ev.Determination.Regime, ev.Determination.Reasons)
	}
	stored, _, err := events.Get(ctx, acct, id)
	if err != nil || len(stored.Buyer.Evidence) != 0 {
		t.Fatalf("stored event keeps evidence: %v %v", err, stored.Buyer.Evidence)
	}
}

// TestFiscalEventResolutionEmptyEvidenceIsAnotherRequest: a resolution with
// locationEvidence [] asks something else than one without it, so the
// Idempotency-Key of the one does not replay the other.
func TestFiscalEventResolutionEmptyEvidenceIsAnotherRequest(t *testing.T) {
	events, id := contradicted(t)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	kept, err := events.Resolve(ctx, acct, id, resolution(t, `{"buyer":{"consumerName":"Max Muster"},"resolvedBy":"ops-1"}`), "res-k")
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.Event.Buyer.Evidence) != 2 {
		t.Fatalf("absent locationEvidence dropped the evidence: %v", kept.Event.Buyer.Evidence)
	}
	_, err = events.Resolve(ctx, acct, id, resolution(t, `{"buyer":{"consumerName":"Max Muster","locationEvidence":[]},"resolvedBy":"ops-1"}`), "res-k")
	if fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Fatalf("the key of a resolution keeping the evidence, reused for one clearing it: %v, want IDEMPOTENCY_CONFLICT", err)
	}
}

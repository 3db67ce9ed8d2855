package fiscal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

func reasonCodes(rs []vat.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// outboxTypes lists the event types of the engine's outbox, in order.
func outboxTypes(t *testing.T, e *fiscal.Engine) []string {
	t.Helper()
	var types []string
	err := e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(fiscal.OutboxEvents, nil, nil, false, func(_, v []byte) bool {
			var ev fiscal.Event
			if err := json.Unmarshal(v, &ev); err != nil {
				t.Errorf("unreadable outbox event: %v", err)
			}
			types = append(types, ev.Type)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// TestResolveSuppliesMissingCountry: an x402-style record without the
// buyer's country is pending; the merchant attests the country afterwards
// and the record becomes PROCESSED in a new revision with receipt, invoice
// and event, while the pending entry stays in the log and still verifies.
func TestResolveSuppliesMissingCountry(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		pending := res.Record
		if pending.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasonCodes(pending.ReviewReasons), vat.ReasonBuyerCountryMissing) || pending.Invoice != nil {
			t.Fatalf("before: %s %v invoice %v", pending.ReviewStatus, reasonCodes(pending.ReviewReasons), pending.Invoice)
		}
		size := e.Ledger().Size()
		// A first revision writes no head pointer: the record is found
		// by the entry that has its id.
		if _, err := e.Ledger().Get("heads", []byte(pending.ID)); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("head of a first revision: %v, want none", err)
		}
		if doc, err := e.Document(pending.ID); err != nil || !json.Valid(doc) {
			t.Fatalf("document of the first revision: %v", err)
		}

		got, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{
			Buyer:      &fiscal.ResolutionBuyer{Country: "de"},
			ResolvedBy: "jane@merchant.example", Note: "country from the customer's account",
		}, "resolve-1")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		if got.Outcome != fiscal.Created || r.ID != pending.ID || r.Revision != 2 || r.ReviewStatus != fiscal.StatusProcessed {
			t.Fatalf("after: outcome %v id %s revision %d %s %v", got.Outcome, r.ID, r.Revision, r.ReviewStatus, reasonCodes(r.ReviewReasons))
		}
		if r.Buyer.Country != "DE" || r.Classification.TaxingCountry != "DE" || r.Classification.Regime != vat.RegimeOSSB2C || r.CreatedAt != pending.CreatedAt {
			t.Errorf("revision facts: buyer %s taxing %s regime %s createdAt %s/%s", r.Buyer.Country, r.Classification.TaxingCountry, r.Classification.Regime, r.CreatedAt, pending.CreatedAt)
		}
		checkAmounts(t, r)
		if head, err := e.Ledger().Get("heads", []byte(r.ID)); err != nil || string(head) != r.ID+"-r2" {
			t.Errorf("head of revision 2: %q, %v", head, err)
		}
		if _, err := e.Document(r.ID + "-r2"); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Errorf("a revision's entry id is not a record id: %v", err)
		}
		if e.Ledger().Size() != size+1 {
			t.Errorf("ledger grew by %d entries, want 1", e.Ledger().Size()-size)
		}
		if n := len(r.History); n != 2 || r.History[1].Cause != fiscal.CauseResolution || r.History[1].ResolvedBy != "jane@merchant.example" ||
			r.History[1].Note == "" || r.History[0].ReviewStatus != fiscal.StatusPendingReview || r.History[1].ReceiptID == r.History[0].ReceiptID {
			t.Errorf("history %+v", r.History)
		}
		ubl, sum, err := b.Invoice(ctx, r.ID)
		if err != nil || len(ubl) == 0 || sum != r.Invoice.UBLSHA256 {
			t.Fatalf("invoice of the revision: %v", err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "resolved.xml")
		if err := os.WriteFile(path, ubl, 0o644); err != nil {
			t.Fatal(err)
		}
		validateUBL(t, []string{path}, false)

		jwks, err := e.JWKS()
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{r.History[0].ReceiptID, r.History[1].ReceiptID} {
			doc, err := e.Receipt(ctx, id)
			if err != nil {
				t.Fatalf("receipt %s: %v", id, err)
			}
			claims, err := receipt.Verify(doc, jwks, e.LogVerifierKey())
			if err != nil {
				t.Fatalf("receipt %s: %v", id, err)
			}
			if want := []string{fiscal.StatusPendingReview, fiscal.StatusProcessed}[i]; claims.ReviewStatus != want {
				t.Errorf("receipt %s says %s, want %s", id, claims.ReviewStatus, want)
			}
			if i == 1 && claims.Supersedes != r.History[0].ReceiptID {
				t.Errorf("revision receipt supersedes %q", claims.Supersedes)
			}
		}
		if types := outboxTypes(t, e); !slices.Equal(types, []string{fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve}) {
			t.Errorf("outbox %v", types)
		}

		// The same key and resolution: the record, replayed, nothing written.
		again, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{
			Buyer:      &fiscal.ResolutionBuyer{Country: "DE"},
			ResolvedBy: "jane@merchant.example", Note: "country from the customer's account",
		}, "resolve-1")
		if err != nil || again.Outcome != fiscal.Replayed || again.Record.Revision != 2 {
			t.Fatalf("replay: %v %+v", err, again)
		}
		// The same key with another resolution is a conflict.
		_, err = b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, ResolvedBy: "jane@merchant.example"}, "resolve-1")
		if code := fiscaltest.Code(err); code != fiscal.CodeIdempotencyConflict {
			t.Fatalf("same key, other body: %v", err)
		}
		// A processed record is not resolved again (that is a credit note's job).
		_, err = b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, ResolvedBy: "jane@merchant.example"}, "")
		if code := fiscaltest.Code(err); code != fiscal.CodeRecordNotPending {
			t.Fatalf("resolving a processed record: %v", err)
		}
		if e.Ledger().Size() != size+1 {
			t.Errorf("refused resolutions wrote %d entries", e.Ledger().Size()-size-1)
		}
	})
}

// TestResolveStillMissingFacts: a resolution that does not supply what the
// determination needs leaves the record pending, in a revision that says
// which facts are still missing.
func TestResolveStillMissingFacts(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		res, err := b.Settle(ctx, fiscaltest.Request(2, "5.00", "", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Name: "A. Customer"}, ResolvedBy: "ops-7"}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		if r.Revision != 2 || r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasonCodes(r.ReviewReasons), vat.ReasonBuyerCountryMissing) || r.Invoice != nil || r.Buyer.Name != "A. Customer" {
			t.Fatalf("revision %d %s %v invoice %v name %q", r.Revision, r.ReviewStatus, reasonCodes(r.ReviewReasons), r.Invoice, r.Buyer.Name)
		}
		if types := outboxTypes(t, e); !slices.Equal(types, []string{fiscal.EventSettlementPendingReview, fiscal.EventSettlementPendingReview}) {
			t.Errorf("outbox %v", types)
		}
	})
}

// TestResolveManualDetermination: a person decides what the rules left
// open (a streaming rate no source confirms); the engine checks the rate
// against the table and refuses a decision the table or the facts
// contradict, writing nothing.
func TestResolveManualDetermination(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		req := fiscaltest.Request(3, "100.00", "FI", "2026-04-10T14:30:00Z")
		req.SupplyKind = vat.KindStreaming
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasonCodes(res.Record.ReviewReasons), vat.ReasonRateUnverified) {
			t.Fatalf("Finnish streaming: %s %v", res.Record.ReviewStatus, reasonCodes(res.Record.ReviewReasons))
		}
		size := e.Ledger().Size()
		standard, _, err := vat.Rates().Standard("FI", time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []struct {
			m     fiscal.ManualDetermination
			field string
		}{
			{fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "FI", RatePercent: standard.Add(standard).String(), Reason: "x"}, "/determination/ratePercent"},
			{fiscal.ManualDetermination{Regime: "GUESS", TaxingCountry: "FI", Reason: "x"}, "/determination/regime"},
			{fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "FI", RatePercent: standard.String()}, "/determination/reason"},
		} {
			_, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Determination: &bad.m, ResolvedBy: "tax-desk-4"}, "")
			var fe *fiscal.Error
			if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != bad.field {
				t.Errorf("%+v: %v, want BAD_REQUEST at %s", bad.m, err, bad.field)
			}
		}
		if _, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FI"}}, ""); fiscaltest.Code(err) != fiscal.CodeBadRequest {
			t.Errorf("no resolvedBy: %v", err)
		}
		if e.Ledger().Size() != size {
			t.Fatalf("refused resolutions wrote %d entries", e.Ledger().Size()-size)
		}

		got, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{
			Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "FI", RatePercent: standard.String(),
				Reason: "on-demand video is not broadcasting under the Finnish VAT Act; the standard rate applies"},
			ResolvedBy: "tax-desk-4",
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		c := r.Classification
		if r.ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C || c.TaxingCountry != "FI" || !c.RatePercent.Decimal().Equal(standard) || r.Invoice == nil {
			t.Fatalf("manual rate: %s %s %s %v", r.ReviewStatus, c.Regime, c.TaxingCountry, c.RatePercent)
		}
		checkAmounts(t, r)
		if !slices.Contains(reasonCodes(c.Reasons), vat.ReasonManualDetermination) {
			t.Errorf("the determination does not say it was manual: %v", reasonCodes(c.Reasons))
		}
		var stored map[string]any
		_ = json.Unmarshal(got.JSON, &stored)
		if stored["revision"] != float64(2) {
			t.Errorf("stored JSON revision %v", stored["revision"])
		}
	})
}

// TestResolveConsumerClearsVATNumber: a VAT number no registry could
// confirm; the merchant states that the buyer is a consumer after all.
func TestResolveConsumerClearsVATNumber(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		req := fiscaltest.Request(5, "100.00", "AT", "2026-04-10T14:30:00Z")
		req.ConsumerVATNumber = "ATU13585627"
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusPendingReview {
			t.Fatalf("unverified number: %s", res.Record.ReviewStatus)
		}
		if _, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C", VATNumber: "ATU13585627"}, ResolvedBy: "x"}, ""); fiscaltest.Code(err) != fiscal.CodeBadRequest {
			t.Errorf("a consumer with a VAT number: %v", err)
		}
		got, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-7"}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		if r.ReviewStatus != fiscal.StatusProcessed || r.Buyer.VATNumber != "" || r.Classification.Regime != vat.RegimeOSSB2C || r.Classification.TaxingCountry != "AT" {
			t.Fatalf("consumer: %s %q %s %s", r.ReviewStatus, r.Buyer.VATNumber, r.Classification.Regime, r.Classification.TaxingCountry)
		}
	})
}

// TestResolveOtherAccount: another account's record is not found, and a
// resolution of it writes nothing.
func TestResolveOtherAccount(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller, fiscaltest.IrishSeller))
		ctx := context.Background()
		res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(4, "1.00", "", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = fiscaltest.Books(t, e, 1).Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "x"}, "")
		if fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("other account: %v", err)
		}
		if e.Ledger().Size() != 1 {
			t.Fatalf("ledger size %d", e.Ledger().Size())
		}
	})
}

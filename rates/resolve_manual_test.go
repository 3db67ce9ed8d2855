package rates_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestManualDeterminationWaitsForRate: a supply the rules leave to review
// (Finnish streaming, rate_unverified) is also waiting for the ECB rate.
// The revision made once the rate is published decides by the rules again,
// so a person's manual determination accepted now would be dropped then:
// it is refused naming /determination until the rate is out, and nothing
// is written.
func TestManualDeterminationWaitsForRate(t *testing.T) {
	ecb := newECBServer(t)
	now := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	e, _ := engineWithRates(t, t.TempDir(), now, ecb)
	defer e.Close()
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(1, "11.90", "FI", "2026-04-14T14:30:00Z")
	req.SupplyKind = vat.KindStreaming
	res, err := books.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	standard, _, err := vat.Rates().Standard("FI", time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	got, err := books.Resolve(ctx, res.Record.ID, fiscal.Resolution{
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "FI", RatePercent: standard.String(), Reason: "the standard rate applies"},
		ResolvedBy:    "tax-desk-4",
	}, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/determination" {
		if got != nil {
			t.Fatalf("accepted while the rate is missing: %s %v, classification %s %v", got.Record.ReviewStatus, got.Record.ReviewReasons, got.Record.Classification.Regime, got.Record.Classification.Reasons)
		}
		t.Fatalf("manual determination while the rate is missing: %v, want BAD_REQUEST at /determination", err)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("a refused resolution wrote %d entries", e.Ledger().Size()-size)
	}
}

// TestManualDeterminationWaitsForNationalRate: the same rule for the
// national currency's rate. A Polish seller's sale to a Polish consumer
// must state its VAT in PLN (Art. 230 Directive 2006/112/EC); the zloty
// rate it needs is not published yet, so the invoice waits for it
// (national_rate_unavailable) and the revision made once it is decides by
// the rules again. A person's manual determination now would be dropped
// then: it is refused naming /determination, and nothing is written.
func TestManualDeterminationWaitsForNationalRate(t *testing.T) {
	ecb := newECBServer(t)
	e, _ := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC), ecb, polishSeller(t))
	defer e.Close()
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(1, "123.00", "PL", "2026-04-14T10:00:00Z")
	req.SupplyKind = vat.KindStreaming
	r := settleRecord(t, books, req)
	if got := reasonCodes(r); r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(got, invoicelaw.ReasonNationalRateUnavailable) {
		t.Fatalf("sale: %s %v, want it waiting for the zloty", r.ReviewStatus, got)
	}
	standard, _, err := vat.Rates().Standard("PL", time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	got, err := books.Resolve(ctx, r.ID, fiscal.Resolution{
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeDomestic, TaxingCountry: "PL", RatePercent: standard.String(), Reason: "the standard rate applies"},
		ResolvedBy:    "tax-desk-4",
	}, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/determination" {
		if got != nil {
			t.Fatalf("accepted while the zloty is missing: %s %v, classification %s", got.Record.ReviewStatus, reasonCodes(got.Record), got.Record.Classification.Regime)
		}
		t.Fatalf("manual determination while the zloty is missing: %v, want BAD_REQUEST at /determination", err)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("a refused resolution wrote %d entries", e.Ledger().Size()-size)
	}
}

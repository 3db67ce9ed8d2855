package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestResolveRestatingCountryKeepsPostalCode: a customer in the Canary
// Islands (ES, 35001: outside the EU VAT territory, Art. 6(1)(b)
// Directive 2006/112/EC) claimed a VAT number no registry confirmed. The
// person states the customer is a consumer, restating the same country.
// Only a new country makes the postal code meaningless: the record's
// postal code stays, and the supply is not taxed as mainland Spain's.
func TestResolveRestatingCountryKeepsPostalCode(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(1, "100.00", "ES", "2026-04-10T14:30:00Z")
	req.ConsumerPostalCode = "35001"
	req.ConsumerVATNumber = "ESA12345674"
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("before: %s %v", res.Record.ReviewStatus, reasonCodes(res.Record.ReviewReasons))
	}
	got, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "ES", BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	r := got.Record
	if r.Buyer.PostalCode != "35001" || r.Classification.Regime == vat.RegimeOSSB2C {
		t.Fatalf("restating ES dropped the postal code: postal %q, %s %s %s %v", r.Buyer.PostalCode, r.ReviewStatus, r.Classification.Regime, r.Classification.TaxingCountry, r.Classification.RatePercent)
	}
}

package catalog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCapabilityCheckDecidesTheThresholdOrderAsSettle: three sales of March
// take the account's 2026 Art. 59c total over EUR 10,000 (the third
// crosses, on 4 March). A sale dated 10 January recorded now was made
// while the year may still have been within: Art. 58 applies only "as of
// that time" the threshold is exceeded (Art. 59c(2) Directive
// 2006/112/EC), so Settle sends it to review (threshold_order_in_doubt).
// The capability check of the account's own corridor on that supply date
// must say the same, not "determined, taxed in Germany".
func TestCapabilityCheckDecidesTheThresholdOrderAsSettle(t *testing.T) {
	seller := fiscal.Seller{
		LegalName: "Small Irish Apps Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-777", Country: "IE",
		Address:       fiscal.Address{Street: "2 Quay", City: "Cork", PostalCode: "T12 X1"},
		Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
	}
	env := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller)
	ctx := context.Background()
	account := "acct_0"
	for i, stamp := range []string{"2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"} {
		if _, err := env.Settle(ctx, account, request(1+i, "6000", "DE", stamp), ""); err != nil {
			t.Fatal(err)
		}
	}
	const stamp = "2026-01-10T10:00:00Z"
	req := check("IE", "DE", "B2C", "x402", "eip155:8453")
	req.SupplyDate = stamp
	c, err := env.CheckCapabilities(ctx, account, req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := env.Settle(ctx, account, request(10, "50", "DE", stamp), "")
	if err != nil {
		t.Fatal(err)
	}
	want := res.Record.Classification
	if want.Status == vat.StatusDetermined || !slices.Contains(reasonCodes(want.Reasons), vat.ReasonThresholdOrderInDoubt) {
		t.Fatalf("the settled sale: %s %s %v, want a review for %s", want.Status, want.TaxingCountry, reasonCodes(want.Reasons), vat.ReasonThresholdOrderInDoubt)
	}
	dc := c.DeterminationCoverage
	if dc.Status != catalog.CheckManualReview || !slices.Contains(reasonCodes(dc.Reasons), vat.ReasonThresholdOrderInDoubt) {
		got := dc.Classification
		t.Errorf("the check of the same supply: %s (%s %s) %v; Settle: %s %v", dc.Status, got.Regime, got.TaxingCountry, reasonCodes(dc.Reasons), want.Status, reasonCodes(want.Reasons))
	}
}

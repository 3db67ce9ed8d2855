package sandbox_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
)

// smallIrishSeller is established only in Ireland and states nothing about
// the Art. 59c threshold: its sales are decided on the running totals.
var smallIrishSeller = fiscal.Seller{
	LegalName: "Small Irish Apps Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-777", Country: "IE",
	Address:       fiscal.Address{Street: "2 Quay", City: "Cork", PostalCode: "T12 X1"},
	Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
}

func reasonCodes(rs []vat.Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	slices.Sort(out)
	return out
}

// TestPreviewsDecideTheThresholdOrderAsSettle: Art. 59c(2) Directive
// 2006/112/EC applies Art. 58 "as of that time" the EUR 10,000 is
// exceeded, in the order the supplies were made; the engine keeps the
// dates of the supplies it counted and sends a sale recorded after a
// later-dated one that would take the year over to review
// (threshold_order_in_doubt). A preview of the account's own sale
// (Evaluate, Simulate) must decide the same sale as Settle then does: the
// same account state, the same supply, the same outcome, not "taxed in
// Germany, exceeded_by_this_supply" for a sale Settle will not decide.
func TestPreviewsDecideTheThresholdOrderAsSettle(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	if _, err := b.Settle(ctx, fiscaltest.Request(1, "10500", "DE", "2026-03-02T10:00:00Z"), ""); err != nil {
		t.Fatal(err)
	}
	const amount, stamp = "4200", "2026-02-02T10:00:00Z"
	sb := sandbox.New(e, sandbox.Options{})
	ev, err := sb.Evaluate(ctx, fiscaltest.AccountID(0), "", sandbox.EvaluateRequest{
		Buyer: parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: amount, Date: stamp,
	})
	if err != nil {
		t.Fatal(err)
	}
	req := fiscaltest.Request(2, amount, "DE", stamp)
	sim, err := sb.Simulate(ctx, fiscaltest.AccountID(0), "", sandbox.SimulateRequest{SettlementRequest: req})
	if err != nil {
		t.Fatal(err)
	}
	var simRec fiscal.Record
	if err := json.Unmarshal(sim.Record, &simRec); err != nil {
		t.Fatal(err)
	}
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	want := res.Record.Classification
	if want.Status == vat.StatusDetermined || !slices.Contains(reasonCodes(want.Reasons), vat.ReasonThresholdOrderInDoubt) {
		t.Fatalf("the settled sale: %s %s %v, want a review for %s", want.Status, want.TaxingCountry, reasonCodes(want.Reasons), vat.ReasonThresholdOrderInDoubt)
	}
	for name, got := range map[string]vat.Determination{"evaluation": ev.Determination, "simulation": simRec.Classification} {
		if got.Status != want.Status || got.Regime != want.Regime || got.TaxingCountry != want.TaxingCountry ||
			!slices.Equal(reasonCodes(got.Reasons), reasonCodes(want.Reasons)) {
			t.Errorf("the %s: %s %q %q %v; Settle of the same sale: %s %q %q %v", name,
				got.Status, got.Regime, got.TaxingCountry, reasonCodes(got.Reasons), want.Status, want.Regime, want.TaxingCountry, reasonCodes(want.Reasons))
		}
	}
}

package sandbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
)

// TestPreviewStatedUnderAgainstTotals: the preview answers for the
// account's own seller what recording answers for the same facts. Its
// profile leaves the Art. 59c position to the running totals and they are
// over EUR 10,000 in 2026 (Art. 59c(1)(c) and (2) Directive 2006/112/EC),
// so a seller stated overThreshold false contradicts the ledger: 400
// naming /seller/overThreshold, as POST /v1/fiscal-events answers, and the
// refused call does not count against the quota (only valid requests
// count). With totals within the threshold the statement is true.
func TestPreviewStatedUnderAgainstTotals(t *testing.T) {
	under := false
	for _, c := range []struct {
		opening string
		accept  bool
	}{{"12000", false}, {"4200", true}} {
		seller, e := fiscaltest.TotalsEngine(t, c.opening)
		sb := sandbox.New(e, sandbox.Options{QuotaPerDay: 1})
		ctx := context.Background()
		acct := fiscaltest.AccountID(0)
		req := sandbox.EvaluateRequest{
			Seller: &parties.Seller{LegalName: seller.LegalName, Country: "IE", OverThreshold: &under},
			Buyer:  parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: vat.KindSaaS}, AmountUSDC: "11.90", Date: "2026-04-10",
		}
		ev, err := sb.Evaluate(ctx, acct, sandbox.AccountAgent(acct), req)
		if c.accept {
			if err != nil || ev.Determination.TaxingCountry != "IE" {
				t.Errorf("opening %s: %v, want IE VAT", c.opening, err)
			}
			continue
		}
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/seller/overThreshold" {
			t.Fatalf("opening %s, overThreshold false: %v, want BAD_REQUEST at /seller/overThreshold", c.opening, err)
		}
		req.Seller.OverThreshold = nil
		ev, err = sb.Evaluate(ctx, acct, sandbox.AccountAgent(acct), req)
		if err != nil {
			t.Fatalf("the first valid call after a refused one: %v", err)
		}
		if ev.Determination.TaxingCountry != "DE" || ev.Quota == nil || ev.Quota.Used != 1 {
			t.Errorf("opening %s, unstated: taxed in %s, quota %+v; want DE, used 1", c.opening, ev.Determination.TaxingCountry, ev.Quota)
		}
	}
}

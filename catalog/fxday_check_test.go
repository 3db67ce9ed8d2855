package catalog_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestCapabilityCheckPredictsTheRateDayInDoubt: under the "rate of the
// day" (fx.ForDayOrPrevious; Art. 91(2) third subparagraph Directive
// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// a sale near the Art. 59c(1)(c) threshold whose place, and so whose
// local day, turns on the rate is sent to review (fx_rate_day_in_doubt):
// an Irish seller's sale at 23:30 UTC on 26 January 2026 to a Finnish
// consumer (26 January in Dublin, 27 January in Helsinki). The check of
// that account's corridor at that instant must say so, as Settle does,
// and not at noon, when the two days are one.
func TestCapabilityCheckPredictsTheRateDayInDoubt(t *testing.T) {
	const at = "2026-01-26T23:30:00Z"
	ctx := context.Background()
	for total := 9290; total <= 9340; total++ {
		s := fiscaltest.IrishSeller
		s.OverThreshold, s.FXPolicy = false, fx.ForDayOrPrevious
		s.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: strconv.Itoa(total)}}
		env := testEngine(t, time.Date(2026, 1, 30, 12, 0, 0, 0, time.UTC), s)
		req := check("IE", "FI", "B2C", "x402", "eip155:8453")
		req.SupplyDate = at
		c, err := env.CheckCapabilities(ctx, "acct_0", req)
		if err != nil {
			t.Fatal(err)
		}
		res, err := env.Settle(ctx, "acct_0", request(1, "1000", "FI", at), "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(reasonCodes(res.Record.ReviewReasons), fiscal.ReasonFXRateDayInDoubt) {
			continue
		}
		if got := reasonCodes(c.ReceiptEligibility.Reasons); !slices.Contains(got, fiscal.ReasonFXRateDayInDoubt) {
			t.Errorf("opening total %d: Settle sends the sale to review (%s); the check says %v", total, fiscal.ReasonFXRateDayInDoubt, got)
		}
		req.SupplyDate = "2026-01-26T12:00:00Z"
		if c, err = env.CheckCapabilities(ctx, "acct_0", req); err != nil {
			t.Fatal(err)
		}
		if got := reasonCodes(c.ReceiptEligibility.Reasons); slices.Contains(got, fiscal.ReasonFXRateDayInDoubt) {
			t.Errorf("opening total %d: at noon the two days are one, yet the check says %v", total, got)
		}
		return
	}
	t.Fatal("no opening total put the sale between the two rates: the case shows nothing")
}

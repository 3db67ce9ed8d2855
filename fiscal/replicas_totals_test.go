package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReplicaStatesTheLogsRunningTotal: two replicas of one PostgreSQL
// log, one account over the Art. 59c threshold, sales one at a time
// alternating between the replicas. Nothing is concurrent, so each record
// must state the running totals the log holds before it (what one engine
// doing the same sales in the same order states), not the figures a
// replica cached before the other replica's sales.
func TestReplicaStatesTheLogsRunningTotal(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	engines := replicaEngines(t, fiscaltest.Config(t, start, smallIrishSeller), 2)
	books := []*fiscal.Books{fiscaltest.Books(t, engines[0], 0), fiscaltest.Books(t, engines[1], 0)}
	total := decimal.Zero // the log's running total for 2026
	for k := 0; k < 8; k++ {
		amount := "100.00"
		if k < 3 {
			amount = "6000.00" // the third takes the year over EUR 10,000
		}
		res, err := books[k%2].Settle(ctx, fiscaltest.Request(k, amount, "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		th := res.Record.Classification.Threshold
		if th == nil || th.Counted == nil {
			t.Fatalf("sale %d: no threshold section", k)
		}
		if !th.TotalBefore.Equal(total) {
			t.Errorf("sale %d on replica %d (%s): states total before %s, the log's total before it is %s", k, k%2, th.Rule, th.TotalBefore, total)
		}
		if k >= 3 && th.Rule != vat.ThresholdCurrentYear {
			t.Errorf("sale %d: rule %s", k, th.Rule)
		}
		total = total.Add(*th.Counted)
	}
}

package refunds

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryRateStartsFromEarlierRefunds: a summary invoice whose
// supplies were refunded before the running total of its credit notes was
// kept (nothing stored under its key) starts from the refund states of its
// supplies at the rate, so that the credit notes already issued count; it
// is the total the credit notes themselves keep.
func TestSummaryRateStartsFromEarlierRefunds(t *testing.T) {
	var now atomic.Pointer[time.Time]
	set := func(t time.Time) { now.Store(&t) }
	set(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	s := fiscaltest.IrishSeller
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	cfg := fiscaltest.Config(t, *now.Load(), s)
	cfg.Clock = func() time.Time { return *now.Load() }
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	ctx := context.Background()
	var recs []*fiscal.Record
	for i := 0; i < 6; i++ {
		// One German consumer's services and e-books: two VAT rates on one
		// summary, one customer (a summary names one: invoicing's oneBuyer).
		req := fiscaltest.Request(700+i, fmt.Sprintf("0.05%d", i), "DE", fmt.Sprintf("2026-03-%02dT10:00:00Z", 2+i))
		req.SupplyKind = []string{"", vat.KindEbook}[i%2]
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, res.Record)
	}
	set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	if _, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"}); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs[:5] {
		req := Request{AmountUSDC: "0.011"}
		if i%2 == 0 {
			req = Request{}
		}
		if _, err := Create(ctx, b, r.ID, req, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs[:2] { // 19 % and 7 %
		sum, err := summaryOf(ctx, b, r)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := summaryRate(ctx, b, sum, r)
		if err != nil || kept.raw == nil {
			t.Fatalf("kept state: %+v %v", kept, err)
		}
		sum.id += "-before" // no state stored under this key: started from the supplies'
		started, err := summaryRate(ctx, b, sum, r)
		if err != nil || started.raw != nil {
			t.Fatalf("started state: %+v %v", started, err)
		}
		if started.st != kept.st {
			t.Errorf("%s %%: started from the supplies' refunds %+v, the credit notes kept %+v", r.Classification.RatePercent, started.st, kept.st)
		}
	}
}

// TestSummaryCreditStaysWithinACentOfNetTimesRate: the running
// difference of a summary's credit notes can put one note's VAT more than
// 0.01 from its net × rate (here 0.02 against 0.05 × 19 % = 0.0095),
// which ubl refuses (its stricter BR-CO-17); the note then states the
// nearest VAT within the cent, and the next one takes up the rest, so that
// the totals still reach what the summary charged.
func TestSummaryCreditStaysWithinACentOfNetTimesRate(t *testing.T) {
	s := &sumRate{
		total: invoicing.SummaryTotal{Category: "S", RatePercent: "19", NetEUR: "1.10", VATEUR: "0.21"},
		st:    sumState{Count: 1, NetExact: "1.025789", VATExact: "0.1949", Net: "1.03", VAT: "0.19"},
	}
	rate := dec("19")
	a := amounts{netExact: dec("0.053685"), vatExact: dec("0.0102")}
	s.credit(&a, rate, true)
	if a.net.String() != "0.05" || a.vat.String() != "0.01" {
		t.Fatalf("credit note net %s VAT %s; want 0.05 and 0.01 (the running difference 0.02 is more than a cent from 0.0095)", a.net, a.vat)
	}
	// The rest of the rate refunded: the totals reach the summary's.
	s.st = sumState{Count: 2, NetExact: "1.079474", VATExact: "0.2051", Net: "1.08", VAT: "0.20"}
	b := amounts{netExact: dec("0.020526"), vatExact: dec("0.0039")}
	s.credit(&b, rate, true)
	if got := dec("1.08").Add(b.net); !got.Equal(dec("1.10")) {
		t.Errorf("net credited in all %s, the summary charged 1.10", got)
	}
	if got := dec("0.20").Add(b.vat); !got.Equal(dec("0.21")) {
		t.Errorf("VAT credited in all %s, the summary charged 0.21", got)
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

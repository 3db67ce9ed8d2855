package invoicing_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// creditedTotal is what the credit notes of a summary's refunds credit at
// one VAT rate: their net and VAT (positive).
type creditedTotal struct{ net, vat decimal.Decimal }

// TestRefundsOfEverySummarySupplyNetTheSummaryToZero: a summary invoice
// charges, per VAT rate, the supplies' exact net and VAT summed and
// rounded once (Art. 223 Directive 2006/112/EC); its credit notes reduce
// that taxable amount and VAT (Art. 90, Art. 219). Refunding every
// supply of the summary, one supply at a time and in parts, must credit
// per rate exactly the net and VAT the summary charged (the summary nets
// to zero), and at no point more; a review found each small refund
// rounded on its own, so that the credit notes of many sub-cent supplies
// credited VAT the summary never charged (or left VAT it did charge).
// Refunds of different supplies of one summary sent at once must not
// both credit from the same running total.
func TestRefundsOfEverySummarySupplyNetTheSummaryToZero(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprint("concurrent=", concurrent), func(t *testing.T) {
			c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
			// One consumer in Germany buys services and e-books (two VAT
			// rates on one summary under the Irish OSS; one customer, as
			// each record states it: oneBuyer): amounts of a few cents,
			// whose VAT is a fraction of a cent each.
			var ids []string
			for i := 0; i < 24; i++ {
				amount := decimal.New(int64(500+3*i), -4).String() // 0.0500 … 0.0569 USDC
				req := fiscaltest.Request(300+i, amount, "DE", fmt.Sprintf("2026-03-%02dT10:00:00Z", 1+i))
				req.SupplyKind = []string{"", vat.KindEbook}[i%2]
				res, err := b.Settle(ctx, req, "")
				if err != nil {
					t.Fatal(err)
				}
				if r := res.Record; r.ReviewStatus != fiscal.StatusProcessed || r.Invoicing == nil || r.Invoicing.Invoice != "summary" {
					t.Fatalf("supply %d: %s %+v", i, r.ReviewStatus, r.Invoicing)
				}
				ids = append(ids, res.Record.ID)
			}
			c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
			issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
			if err != nil || len(issued) != 1 || len(issued[0].Summary.Totals) != 2 {
				t.Fatalf("summary: %v %v, want one of two rates", issued, err)
			}
			charged := map[string]creditedTotal{}
			for _, tot := range issued[0].Summary.Totals {
				charged[tot.RatePercent] = creditedTotal{decimal.RequireFromString(tot.NetEUR), decimal.RequireFromString(tot.VATEUR)}
			}

			var mu sync.Mutex
			credited := map[string]creditedTotal{}
			var problems, files []string
			dir := t.TempDir()
			refund := func(id string, req refunds.Request) {
				r, err := refunds.Create(ctx, b, id, req, "")
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					problems = append(problems, fmt.Sprintf("refund of %s %+v: %v", id, req, err))
					return
				}
				rate := r.Refund.Classification.RatePercent.Decimal().String()
				cur := credited[rate]
				cur.net = cur.net.Add(decimal.RequireFromString(r.Refund.FX.NetEUR).Neg())
				cur.vat = cur.vat.Add(decimal.RequireFromString(r.Refund.FX.VATEUR).Neg())
				credited[rate] = cur
				if doc, _, err := refunds.CreditNote(ctx, b, id, r.Refund.ID); err != nil {
					problems = append(problems, fmt.Sprintf("credit note of %s: %v", r.Refund.ID, err))
				} else {
					files = append(files, filepath.Join(dir, r.Refund.ID+".xml"))
					if err := os.WriteFile(files[len(files)-1], doc, 0o644); err != nil {
						problems = append(problems, err.Error())
					}
				}
				if cur.net.GreaterThan(charged[rate].net) || cur.vat.GreaterThan(charged[rate].vat) {
					problems = append(problems, fmt.Sprintf("after %s the credit notes at %s %% credit net %s VAT %s, more than the summary's %s and %s",
						r.Refund.ID, rate, cur.net, cur.vat, charged[rate].net, charged[rate].vat))
				}
			}
			// Each supply refunded in two parts: a third, then what remains.
			for _, part := range []func(string) refunds.Request{
				func(id string) refunds.Request { return refunds.Request{AmountUSDC: "0.001"} },
				func(string) refunds.Request { return refunds.Request{} },
			} {
				var wg sync.WaitGroup
				for _, id := range ids {
					if !concurrent {
						refund(id, part(id))
						continue
					}
					wg.Add(1)
					go func() { defer wg.Done(); refund(id, part(id)) }()
				}
				wg.Wait()
			}
			if !concurrent {
				fiscaltest.ValidateUBL(t, files, false) // a consumer's summary: plain EN 16931
			}
			for _, p := range problems {
				t.Error(p)
			}
			for rate, want := range charged {
				if got := credited[rate]; !got.net.Equal(want.net) || !got.vat.Equal(want.vat) {
					t.Errorf("every supply refunded: the credit notes at %s %% credit net %s VAT %s; the summary charged net %s VAT %s", rate, got.net, got.vat, want.net, want.vat)
				}
			}
		})
	}
}

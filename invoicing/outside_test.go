package invoicing_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummaryOfAConsumerWithASupplyOutsideTheEU: a consumer who bought a
// taxed supply in Germany and, the same month, one located outside the EU
// (not subject to EU VAT, category O) is invoiced for both: a document
// cannot combine category O with another (EN 16931 BR-O-11), and Art. 223
// Directive 2006/112/EC summarises supplies whose VAT becomes chargeable
// in the month, which a supply outside the scope has none of. Before, both
// waited for one summary invoice that could never be issued.
func TestSummaryOfAConsumerWithASupplyOutsideTheEU(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	var recs []*fiscal.Record
	for i, country := range []string{"DE", "US"} {
		res, err := b.Settle(ctx, fiscaltest.Request(800+i, "11.90", country, "2026-03-1"+string(rune('0'+i))+"T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusProcessed {
			t.Fatalf("%s: %s %v", country, res.Record.ReviewStatus, res.Record.ReviewReasons)
		}
		recs = append(recs, res.Record)
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil {
		t.Fatalf("issuing March: %v (%s)", err, fiscaltest.Code(err))
	}
	for _, r := range recs {
		by, err := invoicing.InvoicedBy(ctx, b, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if by == "" && r.Invoice == nil {
			t.Errorf("supply to %s (%s) has no invoice: its own %+v, invoicing %+v, summaries %d", r.Buyer.Country, r.Classification.Category, r.Invoice, r.Invoicing, len(res))
		}
	}
}

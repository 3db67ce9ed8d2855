package invoicing_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummaryOfABusinessWhoseVATNumberWasWrittenLoosely: a business
// customer's VAT number written with spaces and in lower case in one
// payment and compact in another (the registry confirms both: VIES reads
// the number compacted) is one customer: its supplies of the month are
// invoiced by one summary invoice, which the month's issue run
// (invoicing.Issue with the period alone) issues. Before, the supplies
// were posted under the number as written, which the summary request
// (normalised) could never name: the loose one was left without any
// invoice (Art. 220(1)(1) Directive 2006/112/EC).
func TestSummaryOfABusinessWhoseVATNumberWasWrittenLoosely(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	at := fiscaltest.LawBuyers()[1] // AT: the registry discloses name and address
	var ids []string
	for i, written := range []string{"atu 135 856 27", at.VATNumber} {
		req := fiscaltest.LawRequest(700+i, at, true, false)
		req.ConsumerVATNumber = written
		req.Timestamp = "2026-03-1" + string(rune('0'+i)) + "T10:00:00Z"
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice != nil || r.Invoicing == nil || r.Invoicing.Invoice != "summary" {
			t.Fatalf("business sale %q: %s %v, invoice %+v, invoicing %+v; want its summary", written, r.ReviewStatus, r.ReviewReasons, r.Invoice, r.Invoicing)
		}
		ids = append(ids, r.ID)
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil {
		t.Fatalf("issuing March: %v", err)
	}
	if len(res) != 1 || res[0].Summary.Supplied != 2 || res[0].Summary.Buyer != at.VATNumber {
		for _, r := range res {
			t.Logf("summary for %q: %d supplies", r.Summary.Buyer, r.Summary.Supplied)
		}
		t.Fatalf("%d summaries, want one of both supplies for %s", len(res), at.VATNumber)
	}
	for _, id := range ids {
		if by, err := invoicing.InvoicedBy(ctx, b, id); err != nil || by != res[0].Summary.ID {
			t.Errorf("record %s invoiced by %q (%v), want %s", id, by, err, res[0].Summary.ID)
		}
	}
}

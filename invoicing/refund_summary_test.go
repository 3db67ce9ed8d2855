package invoicing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundOfSummaryInvoicedSupplyIsRefusedAsSuch: a processed consumer
// supply of a summary_monthly account, covered by its month's summary
// invoice, has no invoice of its own for a credit note to correct, which
// this version needs. The refusal says so (CREDIT_NOTE_REFUSED, naming the
// invoicing) and writes nothing; a review found it answered
// RECORD_PENDING_REVIEW, "resolve the review first", for a record no
// review could resolve.
func TestRefundOfSummaryInvoicedSupplyIsRefusedAsSuch(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusProcessed || res.Record.Invoice != nil {
		t.Fatalf("record %s, invoice %+v", res.Record.ReviewStatus, res.Record.Invoice)
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	if _, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"}); err != nil {
		t.Fatal(err)
	}
	size := b.Engine().Ledger().Size()
	_, err = refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "1.00"}, "")
	if fiscaltest.Code(err) != fiscal.CodeCreditNoteRefused || !strings.Contains(err.Error(), "no invoice of its own") || !strings.Contains(err.Error(), "summary") {
		t.Fatalf("refund of a supply invoiced by a summary: %v (%s), want CREDIT_NOTE_REFUSED naming the invoicing", err, fiscaltest.Code(err))
	}
	if got := b.Engine().Ledger().Size(); got != size {
		t.Fatalf("the refused refund wrote %d entries", got-size)
	}
}

// TestUnknownSummaryIsNamedAsSuch: reading a summary invoice that does not
// exist is NOT_FOUND naming a summary invoice, not "settlement … not
// found" (the engine's word for every entry), which sent a client looking
// for the wrong thing.
func TestUnknownSummaryIsNamedAsSuch(t *testing.T) {
	c := newClock(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	_, _, err := invoicing.Summary(context.Background(), b, "sum_zzz")
	if fiscaltest.Code(err) != fiscal.CodeNotFound || !strings.Contains(err.Error(), "summary invoice sum_zzz") || strings.Contains(err.Error(), "settlement") {
		t.Fatalf("unknown summary: %v (%s), want NOT_FOUND naming the summary invoice", err, fiscaltest.Code(err))
	}
}

package returns_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
)

// TestRefundOfUninvoicedSupplyReducesTheReturn: an account that invoices
// none of its consumer supplies (none_b2c, no invoice required) refunds
// one in two parts. Each refund is recorded without a credit note (there
// is no invoice to amend, Art. 219 Directive 2006/112/EC), with its own
// receipt superseding the sale's, and the OSS return of the quarter is
// reduced by each (Art. 90): its line sums the sale and its refunds, so
// that once everything is refunded the line is zero. Until this version
// such a refund was refused (CREDIT_NOTE_REFUSED), which left the return
// overstating the VAT owed.
func TestRefundOfUninvoicedSupplyReducesTheReturn(t *testing.T) {
	ctx := context.Background()
	s := ossSeller()
	s.Invoicing = fiscal.InvoicingNoneB2C
	// Sold on 10 March, refunded on 20 March: both in the return of Q1,
	// computed once the quarter's period-end rate is out (testNow).
	var clock atomic.Pointer[time.Time]
	at := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	clock.Store(&at)
	cfg := fiscaltest.Config(t, at, s)
	cfg.NoBackground = true
	cfg.Clock = func() time.Time { return *clock.Load() }
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	sale := res.Record
	if sale.ReviewStatus != fiscal.StatusProcessed || sale.Invoice != nil || !sale.Invoicing.Uninvoiced() {
		t.Fatalf("sale %s, invoice %+v, invoicing %+v: want a processed supply with no invoice", sale.ReviewStatus, sale.Invoice, sale.Invoicing)
	}
	line := func() returns.Line {
		t.Helper()
		now := *clock.Load()
		clock.Store(&testNow)
		defer clock.Store(&now)
		ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var found []returns.Line
		for _, l := range ret.Lines {
			if l.MemberState == "DE" {
				found = append(found, l)
			}
		}
		if len(found) != 1 {
			t.Fatalf("return lines %+v: want one German line", ret.Lines)
		}
		return found[0]
	}
	before := line()

	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var rfs []*refunds.Refund
	for i, amount := range []string{"4.00", ""} { // a part, then what remains
		size := e.Ledger().Size()
		r, err := refunds.Create(ctx, b, sale.ID, refunds.Request{AmountUSDC: amount, Reason: "returned"}, "")
		if err != nil {
			t.Fatalf("refund %d of the uninvoiced supply: %v", i+1, err)
		}
		rf := r.Refund
		rfs = append(rfs, rf)
		if got := e.Ledger().Size(); got != size+1 {
			t.Fatalf("refund %d wrote %d entries, want 1", i+1, got-size)
		}
		if rf.CreditNote != nil || rf.OriginalInvoiceID != "" {
			t.Fatalf("refund %d: credit note %+v, invoice %q: want none, the supply has no invoice", i+1, rf.CreditNote, rf.OriginalInvoiceID)
		}
		if _, _, err := refunds.CreditNote(ctx, b, sale.ID, rf.ID); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("credit note of refund %d: %v (%s), want NOT_FOUND", i+1, err, fiscaltest.Code(err))
		}
		raw, err := b.Receipt(ctx, rf.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		c, err := receipt.Verify(raw, jwks, e.LogVerifierKey())
		if err != nil {
			t.Fatalf("receipt of refund %d: %v", i+1, err)
		}
		if c.Supersedes != sale.Receipt.ID || c.Invoice != nil || c.FX == nil || c.FX.VATEURExact != rf.FX.VATEURExact || c.Settlement.AmountUSDC != rf.AmountUSDC {
			t.Fatalf("receipt of refund %d: supersedes %q, invoice %+v, fx %+v", i+1, c.Supersedes, c.Invoice, c.FX)
		}
	}
	if !rfs[1].Full || rfs[1].RemainingUSDC != "0.000000" {
		t.Fatalf("second refund: full %v, remaining %s", rfs[1].Full, rfs[1].RemainingUSDC)
	}
	// Sale and refunds cancel exactly, figure by figure.
	for _, f := range []func(fiscal.RecordFX) string{
		func(x fiscal.RecordFX) string { return x.GrossEURExact },
		func(x fiscal.RecordFX) string { return x.NetEURExact },
		func(x fiscal.RecordFX) string { return x.VATEURExact },
	} {
		sum := decimal.RequireFromString(f(sale.FX))
		for _, rf := range rfs {
			sum = sum.Add(decimal.RequireFromString(f(rf.FX)))
		}
		if !sum.IsZero() {
			t.Fatalf("sale and refunds sum to %s, want 0", sum)
		}
	}
	after := line()
	if after.Records != before.Records+2 || !decimal.RequireFromString(after.AmountUSDC).IsZero() ||
		!decimal.RequireFromString(after.InvoiceVATEUR).IsZero() || !decimal.RequireFromString(after.InvoiceTaxableAmountEUR).IsZero() {
		t.Fatalf("German line after the refunds %+v (before %+v): want the sale and its two refunds, summing to zero", after, before)
	}
	if decimal.RequireFromString(before.InvoiceVATEUR).Sign() <= 0 {
		t.Fatalf("German line before the refunds %+v: want VAT", before)
	}
}

// TestRefundOfSummaryInvoicedSupplyStaysRefused: a supply a summary invoice
// covers still has an invoice (the summary's) that a refund would have to
// amend, which this version does not do: the refusal names the invoicing
// and writes nothing: the path of supplies without an invoice does not
// take it.
func TestRefundOfSummaryInvoicedSupplyStaysRefused(t *testing.T) {
	ctx := context.Background()
	s := ossSeller()
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	cfg := fiscaltest.Config(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC), s)
	cfg.NoBackground = true
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Invoice != nil || res.Record.Invoicing.Uninvoiced() {
		t.Fatalf("invoice %+v, invoicing %+v: want a supply a summary covers", res.Record.Invoice, res.Record.Invoicing)
	}
	size := e.Ledger().Size()
	if _, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "1.00"}, ""); fiscaltest.Code(err) != fiscal.CodeCreditNoteRefused {
		t.Fatalf("refund of a summary-invoiced supply: %v (%s), want CREDIT_NOTE_REFUSED", err, fiscaltest.Code(err))
	}
	if got := e.Ledger().Size(); got != size {
		t.Fatalf("the refused refund wrote %d entries", got-size)
	}
}

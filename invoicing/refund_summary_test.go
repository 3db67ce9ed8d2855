package invoicing_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
)

// TestRefundOfSummaryInvoicedSupplyWaitsForTheSummary: a processed
// consumer supply of a summary_monthly account has no invoice a credit
// note could correct until its month's summary invoice is issued (Art. 219
// Directive 2006/112/EC: a credit note amends an issued invoice). A refund
// before that is refused as such (CREDIT_NOTE_REFUSED, naming the summary
// to issue) and writes nothing; a review found it answered
// RECORD_PENDING_REVIEW, "resolve the review first", for a record no
// review could resolve.
func TestRefundOfSummaryInvoicedSupplyWaitsForTheSummary(t *testing.T) {
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
	size := b.Engine().Ledger().Size()
	_, err = refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "1.00"}, "")
	if fiscaltest.Code(err) != fiscal.CodeCreditNoteRefused || !strings.Contains(err.Error(), "summary invoice of 2026-03") || !strings.Contains(err.Error(), "not issued yet") {
		t.Fatalf("refund before the summary: %v (%s), want CREDIT_NOTE_REFUSED naming the summary to issue", err, fiscaltest.Code(err))
	}
	if got := b.Engine().Ledger().Size(); got != size {
		t.Fatalf("the refused refund wrote %d entries", got-size)
	}
}

// TestRefundOfSummaryInvoicedSupplyCorrectsTheSummary: once the month's
// summary invoice is issued, a refund of one of the supplies it covers is
// a credit note correcting that summary (BT-25: the summary's number,
// BT-26: its date of issue), for the refunded share of that supply at its
// own VAT rate and ECB rate, under the summary's invoicing law; the
// validators accept it, its receipt verifies and supersedes the sale's,
// and the OSS return counts the correction.
func TestRefundOfSummaryInvoicedSupplyCorrectsTheSummary(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	e := b.Engine()
	sale, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Settle(ctx, fiscaltest.Request(2, "2.38", "DE", "2026-03-11T10:00:00Z"), ""); err != nil {
		t.Fatal(err)
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil || len(issued) != 1 {
		t.Fatalf("summary: %v %v", issued, err)
	}
	sum := issued[0].Summary
	orig := sale.Record
	r, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "5.95", Reason: "half of the calls failed"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Refund
	if ref.OriginalInvoiceID != sum.Invoice.ID || ref.CreditNote == nil || ref.CreditNote.TaxCountry != sum.Invoice.TaxCountry {
		t.Fatalf("refund %+v: want a credit note of the summary %s (%s)", ref, sum.Invoice.ID, sum.Invoice.TaxCountry)
	}
	// Half the supply: its own figures, halved at its own rates.
	rate := orig.FX.USDPerEUR
	if ref.FX.USDPerEUR.Raw != rate.Raw || ref.Classification.RatePercent.Decimal().String() != "19" {
		t.Errorf("refund rates %s %v, want the supply's %s and 19 %%", ref.FX.USDPerEUR.Raw, ref.Classification.RatePercent, rate.Raw)
	}
	wantNet := decimal.RequireFromString(orig.FX.NetEURExact).Div(decimal.NewFromInt(2))
	if got := decimal.RequireFromString(ref.FX.NetEURExact).Neg(); !got.Sub(wantNet).Abs().LessThan(decimal.New(1, -9)) {
		t.Errorf("refund net %s, want half the supply's %s", ref.FX.NetEURExact, orig.FX.NetEURExact)
	}
	doc, digest, err := refunds.CreditNote(ctx, b, orig.ID, ref.ID)
	if err != nil || digest != ref.CreditNote.UBLSHA256 {
		t.Fatalf("credit note: %v", err)
	}
	for _, want := range []string{
		"<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>",
		"<cac:InvoiceDocumentReference><cbc:ID>" + sum.Invoice.ID + "</cbc:ID><cbc:IssueDate>" + sum.Invoice.IssueDate + "</cbc:IssueDate>",
		"<cbc:Percent>19</cbc:Percent>",
		"<cbc:TaxExclusiveAmount currencyID=\"EUR\">" + neg(ref.FX.NetEUR) + "</cbc:TaxExclusiveAmount>",
	} {
		if !bytes.Contains(compact(doc), []byte(want)) {
			t.Errorf("credit note lacks %s:\n%s", want, doc)
		}
	}
	file := filepath.Join(t.TempDir(), "cn.xml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	fiscaltest.ValidateUBL(t, []string{file}, false) // a consumer's: no Peppol document, as its summary

	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.Receipt(ctx, ref.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := receipt.Verify(rc, jwks, e.LogVerifierKey())
	if err != nil || claims.Supersedes != orig.Receipt.ID || claims.Invoice == nil || claims.Invoice.ID != ref.CreditNote.ID {
		t.Errorf("refund receipt: %+v %v, want it superseding %s and naming credit note %s", claims, err, orig.Receipt.ID, ref.CreditNote.ID)
	}

	// Refunded in April: the first quarter's return keeps both sales, the
	// second's corrects it (Art. 61 Implementing Regulation 282/2011).
	q1, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 1}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var usdc decimal.Decimal
	for _, l := range q1.Lines {
		if l.MemberState == "DE" {
			usdc = usdc.Add(decimal.RequireFromString(l.AmountUSDC))
		}
	}
	if want := decimal.RequireFromString("11.90").Add(decimal.RequireFromString("2.38")); !usdc.Equal(want) {
		t.Errorf("2026-Q1 DE lines sum %s USDC, want %s: both sales", usdc, want)
	}
	q2, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(q2.Corrections) != 1 || q2.Corrections[0].OriginalPeriod != "2026-Q1" || q2.Corrections[0].MemberState != "DE" ||
		!decimal.RequireFromString(q2.Corrections[0].AmountUSDC).Equal(decimal.RequireFromString("-5.95")) {
		t.Errorf("2026-Q2 corrections %+v, want the refund of 5.95 USDC correcting 2026-Q1 for DE", q2.Corrections)
	}
}

// neg is the credit note's spelling of a refund's negative figure:
// positive (the document type gives the sign).
func neg(s string) string { return strings.TrimPrefix(s, "-") }

// compact drops the indentation between elements, so that a test can look
// for nested elements as one string.
func compact(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		out = append(out, bytes.TrimSpace(line)...)
	}
	return out
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

// TestRefundOfBusinessSummaryIsAPeppolCreditNote: a business customer's
// summary invoice is a Peppol document under the reverse charge; the
// credit note of a full refund of one of its supplies is one too (category
// AE, the reverse-charge mention), correcting that summary, and passes the
// Peppol layer.
func TestRefundOfBusinessSummaryIsAPeppolCreditNote(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	de := fiscaltest.LawBuyers()[0]
	var ids []string
	for i := 0; i < 2; i++ {
		req := fiscaltest.LawRequest(20+i, de, true, true)
		req.Timestamp = fmt.Sprintf("2026-03-%02dT14:30:00Z", 10+i)
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Record; r.ReviewStatus != fiscal.StatusProcessed || r.Invoicing == nil || r.Invoicing.Invoice != "summary" {
			t.Fatalf("business sale: %s %v %+v", r.ReviewStatus, r.ReviewReasons, r.Invoicing)
		}
		ids = append(ids, res.Record.ID)
	}
	c.set(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))
	sum, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-03", Buyer: de.VATNumber})
	if err != nil {
		t.Fatal(err)
	}
	r, err := refunds.Create(ctx, b, ids[1], refunds.Request{}, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Refund
	if !ref.Full || ref.OriginalInvoiceID != sum.Summary.Invoice.ID || ref.CreditNote == nil || ref.CreditNote.Profile != sum.Summary.Invoice.Profile {
		t.Fatalf("refund %+v, want a full refund credited against summary %s in its profile %s", ref, sum.Summary.Invoice.ID, sum.Summary.Invoice.Profile)
	}
	doc, _, err := refunds.CreditNote(ctx, b, ids[1], ref.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<cbc:ID>AE</cbc:ID>", "<cbc:ID>" + sum.Summary.Invoice.ID + "</cbc:ID>", de.VATNumber} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("credit note lacks %s:\n%s", want, doc)
		}
	}
	file := filepath.Join(t.TempDir(), "business-cn.xml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	fiscaltest.ValidateUBL(t, []string{file}, true)
}

// TestFullRefundOfSummarySupplyCreditsWhatTheSummaryCharged: a summary
// invoice rounds each VAT rate's exact net and VAT once to the cent; a
// supply alone at its rate is charged its exact net rounded, not its gross
// and VAT rounded and subtracted as its own invoice would have been. The
// credit notes of that supply refunded in full (in two refunds, as in
// one) credit exactly the net and VAT the summary charged for it; a review
// found a full refund of 11.90 USDC crediting EUR 8.66 net against the
// summary's 8.65.
func TestFullRefundOfSummarySupplyCreditsWhatTheSummaryCharged(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
			sale, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
			issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
			if err != nil || len(issued) != 1 || len(issued[0].Summary.Totals) != 1 {
				t.Fatalf("summary: %v %v", issued, err)
			}
			charged := issued[0].Summary.Totals[0]
			if charged.NetEUR == sale.Record.FX.NetEUR {
				t.Fatalf("the supply's own net %s equals the summary's %s: this amount does not tell the roundings apart", sale.Record.FX.NetEUR, charged.NetEUR)
			}
			var reqs []refunds.Request
			if split {
				reqs = append(reqs, refunds.Request{AmountUSDC: "3.33"})
			}
			reqs = append(reqs, refunds.Request{})
			var net, vatSum decimal.Decimal
			for _, req := range reqs {
				r, err := refunds.Create(ctx, b, sale.Record.ID, req, "")
				if err != nil {
					t.Fatal(err)
				}
				net = net.Add(decimal.RequireFromString(r.Refund.FX.NetEUR).Neg())
				vatSum = vatSum.Add(decimal.RequireFromString(r.Refund.FX.VATEUR).Neg())
				doc, _, err := refunds.CreditNote(ctx, b, sale.Record.ID, r.Refund.ID)
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(t.TempDir(), "cn.xml")
				if err := os.WriteFile(file, doc, 0o644); err != nil {
					t.Fatal(err)
				}
				fiscaltest.ValidateUBL(t, []string{file}, false)
			}
			if !net.Equal(decimal.RequireFromString(charged.NetEUR)) || !vatSum.Equal(decimal.RequireFromString(charged.VATEUR)) {
				t.Errorf("credit notes credit net %s VAT %s, the summary charged net %s VAT %s for the supply", net, vatSum, charged.NetEUR, charged.VATEUR)
			}
		})
	}
}

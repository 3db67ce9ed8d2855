package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRefundOfASupplyWhoseSummaryIsRefused: a refund of a supply a
// summary invoice covers waits for that summary (a credit note amends an
// issued invoice, Art. 219 Directive 2006/112/EC). A review found a
// month whose summary can never be issued (its supplies made under two
// seller VAT numbers, Art. 226(3); its records naming the buyer otherwise,
// Art. 226(5)) leaving its supplies' refunds refused for ever, "issue it,
// then refund", while issuing it answered INVOICE_RULES_FAILED. Once the
// month is closed and its summary refused, the supply refunded is
// invoiced on its own (Art. 220: a summary is the seller's option, Art.
// 223), under the law, seller number and buyer its record states, and the
// credit note corrects that invoice (BT-25); refunding it again corrects
// the same invoice, the month's summary no longer covers it, and what is
// left of the month is summarised when it can be.
func TestRefundOfASupplyWhoseSummaryIsRefused(t *testing.T) {
	de := fiscaltest.LawBuyers()[0]
	for _, how := range []string{"seller number", "buyer facts", "business moved"} {
		t.Run(how, func(t *testing.T) {
			c := newClock(time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
			oldNumber := b.Account().Seller.VATNumber
			first := fiscaltest.Request(70, "11.90", "DE", "2026-03-10T10:00:00Z")
			switch how {
			case "buyer facts":
				first.ConsumerName = "Alice Muster"
			case "business moved": // a Peppol document under the reverse charge
				first = fiscaltest.LawRequest(70, de, true, true)
				first.Timestamp = "2026-03-10T14:30:00Z"
			}
			sale, err := b.Settle(ctx, first, "")
			if err != nil {
				t.Fatal(err)
			}
			if how == "seller number" {
				b = renumber(t, b, newNumber)
			}
			latest := fiscaltest.Request(71, "2.38", "DE", "2026-03-20T10:00:00Z")
			switch how {
			case "buyer facts":
				latest.ConsumerCountry = "FR"
			case "business moved":
				latest = fiscaltest.LawRequest(71, de, true, true)
				latest.Timestamp = "2026-03-20T14:30:00Z"
				latest.ConsumerAddress.Street = "9 New Street"
			}
			other, err := b.Settle(ctx, latest, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []*fiscal.Record{sale.Record, other.Record} {
				if inv := r.Invoicing; r.ReviewStatus != fiscal.StatusProcessed || inv == nil || inv.Invoice != "summary" || inv.Buyer != sale.Record.Invoicing.Buyer {
					t.Fatalf("supply %s: %s %+v; want both on one summary", r.ID, r.ReviewStatus, inv)
				}
			}
			c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
			q := invoicing.SummaryRequest{Period: "2026-03", Buyer: sale.Record.Invoicing.Buyer}
			if _, err := issueOne(ctx, b, q); fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed {
				t.Fatalf("the month's summary: %v (%s); the test needs one refused", err, fiscaltest.Code(err))
			}

			r, err := refunds.Create(ctx, b, sale.Record.ID, refunds.Request{AmountUSDC: "5.95", Reason: "half"}, "")
			if err != nil {
				t.Fatalf("refund of a supply whose summary is refused: %v (%s); want it refunded against an invoice of its own", err, fiscaltest.Code(err))
			}
			cov, err := invoicing.Covering(ctx, b, sale.Record.ID)
			if err != nil || cov.InvoiceID == "" || cov.SummaryID == "" {
				t.Fatalf("the refunded supply's invoice: %+v %v", cov, err)
			}
			own, ownUBL, err := invoicing.Summary(ctx, b, cov.SummaryID)
			if err != nil {
				t.Fatal(err)
			}
			if own.Summary.Supplied != 1 || own.Summary.Supplies[0].RecordID != sale.Record.ID {
				t.Errorf("the supply's own invoice %+v: want it alone, saying why", own.Summary)
			}
			// An invoice of its own in every outward view (Art. 220, 221),
			// not a summary (Art. 223): what covers the supply, the event
			// its webhooks receive, the wording of its line.
			if cov.Invoice != invoicing.CoveredPerPayment {
				t.Errorf("invoiced-by says %q for the supply's own invoice, want %q", cov.Invoice, invoicing.CoveredPerPayment)
			}
			if typ := eventTypeOf(t, b, cov.SummaryID); typ != invoicing.EventInvoiceIssued {
				t.Errorf("the supply's own invoice sent %q, want %q", typ, invoicing.EventInvoiceIssued)
			}
			if line := string(compact(ownUBL)); strings.Contains(line, "1 supplies") || strings.Contains(line, "Summary invoice") {
				t.Errorf("the supply's own invoice is worded as a summary:\n%s", ownUBL)
			}
			ref := r.Refund
			if ref.OriginalInvoiceID != cov.InvoiceID || ref.CreditNote == nil {
				t.Fatalf("refund corrects %q (credit note %+v); the supply's own invoice is %s", ref.OriginalInvoiceID, ref.CreditNote, cov.InvoiceID)
			}
			cn, _, err := refunds.CreditNote(ctx, b, sale.Record.ID, ref.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(compact(cn)), "<cac:InvoiceDocumentReference><cbc:ID>"+cov.InvoiceID+"</cbc:ID>") {
				t.Errorf("credit note does not refer to invoice %s:\n%s", cov.InvoiceID, cn)
			}
			for name, doc := range map[string][]byte{"invoice": ownUBL, "credit note": cn} {
				if n, _, _ := ubl.SellerTaxIDs(doc); n != oldNumber {
					t.Errorf("the %s states seller VAT number %q; the supply was made under %q", name, n, oldNumber)
				}
				if how == "buyer facts" && (!strings.Contains(customerOf(doc), "Alice Muster") || !strings.Contains(customerOf(doc), "<cbc:IdentificationCode>DE<")) {
					t.Errorf("the %s names the customer\n%s\nnot as the supply's record does (Alice Muster, DE)", name, customerOf(doc))
				}
				if how == "business moved" && (!strings.Contains(customerOf(doc), "2 Customer Street") || !strings.Contains(customerOf(doc), de.VATNumber)) {
					t.Errorf("the %s names the customer\n%s\nnot as the supply's record does (2 Customer Street, %s)", name, customerOf(doc), de.VATNumber)
				}
			}
			dir := t.TempDir()
			files := []string{filepath.Join(dir, "invoice.xml"), filepath.Join(dir, "cn.xml")}
			for i, d := range [][]byte{ownUBL, cn} {
				if err := os.WriteFile(files[i], d, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fiscaltest.ValidateUBL(t, files, how == "business moved")

			// The rest: the same invoice, once.
			size := b.Engine().Ledger().Size()
			r2, err := refunds.Create(ctx, b, sale.Record.ID, refunds.Request{}, "")
			if err != nil || r2.Refund.OriginalInvoiceID != cov.InvoiceID || !r2.Refund.Full {
				t.Fatalf("second refund: %+v %v; want the rest against %s", r2, err, cov.InvoiceID)
			}
			if got := b.Engine().Ledger().Size(); got != size+1 {
				t.Errorf("the second refund wrote %d entries, want its own alone", got-size)
			}
			// The month's summary, without the supply invoiced on its own.
			sum, err := issueOne(ctx, b, q)
			if err != nil {
				t.Fatalf("the month's summary of what is left: %v", err)
			}
			if sum.Summary.Supplied != 1 || sum.Summary.Supplies[0].RecordID != other.Record.ID {
				t.Errorf("the month's summary covers %+v; want %s alone", sum.Summary.Supplies, other.Record.ID)
			}
		})
	}
}

// customerOf is a document's AccountingCustomerParty, compacted.
func customerOf(doc []byte) string {
	s := string(compact(doc))
	_, after, _ := strings.Cut(s, "<cac:AccountingCustomerParty>")
	party, _, _ := strings.Cut(after, "</cac:AccountingCustomerParty>")
	return party
}

// TestRefundOfASupplyThatCannotBeInvoicedAloneNamesWhatToFix: when the
// supply whose month's summary is refused cannot be invoiced on its own
// either (the account's profile now puts it under another state's
// invoicing rules than it was recorded and declared under, Art. 219a
// Directive 2006/112/EC), its refund is CREDIT_NOTE_REFUSED naming both
// refusals, with what the operator changes first (the registrations'
// dates), and writes nothing; once the profile is dated back, the month's
// summary can be issued, and the refund corrects it.
func TestRefundOfASupplyThatCannotBeInvoicedAloneNamesWhatToFix(t *testing.T) {
	c := newClock(time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	recorded := b.Account().Seller
	var recs []*fiscal.Record
	for i := 0; i < 2; i++ {
		res, err := b.Settle(ctx, fiscaltest.Request(80+i, "1.19", "DE", fmt.Sprintf("2026-04-1%dT10:00:00Z", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, res.Record)
	}
	state := recs[0].Invoicing.TaxCountry
	changed := recorded
	changed.OtherEstablishments = []string{"DE"}
	changed.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "DE", ValidTo: "2026-04-10"},
		{Scheme: vat.RegistrationOSSUnion, Country: state, ValidFrom: "2026-04-11"},
	}
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(changed)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, b.Engine(), 0)
	c.set(time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC))
	size := b.Engine().Ledger().Size()
	_, err := refunds.Create(ctx, b, recs[0].ID, refunds.Request{AmountUSDC: "0.50"}, "")
	if fiscaltest.Code(err) != fiscal.CodeCreditNoteRefused || !strings.Contains(err.Error(), "cannot be issued") ||
		!strings.Contains(err.Error(), "on its own either") || !strings.Contains(err.Error(), "validFrom") {
		t.Fatalf("refund of a supply that cannot be invoiced at all: %v (%s); want CREDIT_NOTE_REFUSED naming both refusals and the registrations to date", err, fiscaltest.Code(err))
	}
	if got := b.Engine().Ledger().Size(); got != size {
		t.Fatalf("the refused refund wrote %d entries", got-size)
	}
	// The operator dates the profile back as it was for April: the month's
	// summary can be issued now, and the refund waits for it, then
	// corrects it.
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(recorded)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, b.Engine(), 0)
	if _, err := refunds.Create(ctx, b, recs[0].ID, refunds.Request{AmountUSDC: "0.50"}, ""); fiscaltest.Code(err) != fiscal.CodeCreditNoteRefused || !strings.Contains(err.Error(), "not issued yet") {
		t.Fatalf("refund once the summary can be issued: %v; want it waiting for the summary", err)
	}
	sum, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-04", Buyer: recs[0].Invoicing.Buyer})
	if err != nil || sum.Summary.Supplied != 2 {
		t.Fatalf("the month's summary: %+v %v", sum, err)
	}
	r, err := refunds.Create(ctx, b, recs[0].ID, refunds.Request{AmountUSDC: "0.50"}, "")
	if err != nil || r.Refund.OriginalInvoiceID != sum.Summary.Invoice.ID {
		t.Fatalf("refund once the summary is issued: %+v %v; want it correcting %s", r, err, sum.Summary.Invoice.ID)
	}
}

// eventTypeOf is the type of the outbox event of the account's document id.
func eventTypeOf(t *testing.T, b *fiscal.Books, id string) string {
	t.Helper()
	var typ string
	err := b.Engine().Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(fiscal.OutboxEvents, nil, nil, false, func(_, v []byte) bool {
			var ev fiscal.Event
			if json.Unmarshal(v, &ev) == nil && ev.Account == b.Account().ID && ev.RecordID == id {
				typ = ev.Type
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

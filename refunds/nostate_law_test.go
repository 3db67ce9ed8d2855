package refunds_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCreditNoteOfAnInvoiceUnderNoStatesRules: a Swiss seller with fixed
// establishments in Austria and Germany sells to a customer in the United
// States: a supply outside the Community, whose invoice follows the rules
// of the member state of the establishment that makes it (Art. 219a(2)(a)(ii)
// Directive 2006/112/EC); with two and no one named, the engine follows no
// state's rules, and the record states no tax country, with that basis.
// The seller then moves to Poland (or Ireland). A refund of the supply
// amends that invoice (Art. 219: a document amending it, referring to it
// specifically), so its credit note follows the law the invoice followed.
// A review found the credit note's law decided again from the account's
// current profile, as for a record from before invoices stated their law:
// Polish rules, which ask for the VAT in złoty (Art. 230) the supply never
// had, so the refund was refused (CREDIT_NOTE_REFUSED) and the supply could
// not be refunded at all.
func TestCreditNoteOfAnInvoiceUnderNoStatesRules(t *testing.T) {
	swiss := fiscal.Seller{
		LegalName: "Beispiel AG", Country: "CH", OtherEstablishments: []string{"AT", "DE"}, VATNumber: "ATU46080404", LegalID: "CHE-123.456.789",
		Address:       fiscal.Address{Street: "Bahnhofstrasse 1", City: "Zürich", PostalCode: "8001"},
		OverThreshold: true,
	}
	moves := []struct {
		to     string
		seller fiscal.Seller
	}{
		{"PL", fiscal.Seller{LegalName: "Example sp. z o.o.", Country: "PL", VATNumber: "PL1132191233", LegalID: "KRS 0000123456",
			Address: fiscal.Address{Street: "ul. Marszałkowska 1", City: "Warszawa", PostalCode: "00-001"}, OverThreshold: true,
			Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "PL"}}}},
		{"IE", irishSeller},
	}
	ctx := context.Background()
	for i, m := range moves {
		t.Run(m.to, func(t *testing.T) {
			e := testEngine(t, refundNow, swiss)
			b := fiscaltest.Books(t, e, 0)
			orig := settleOK(t, b, request(700+i, "11.90", "US", "2026-04-10T14:30:00Z"))
			if orig.ReviewStatus != fiscal.StatusProcessed || orig.Invoice == nil || orig.Invoice.TaxCountry != "" || orig.Invoice.TaxBasis == "" {
				t.Fatalf("sale: %s %v, invoice %+v; want an invoice under no state's rules", orig.ReviewStatus, orig.ReviewReasons, orig.Invoice)
			}
			inv, _, err := b.Invoice(ctx, orig.ID)
			if err != nil {
				t.Fatal(err)
			}
			invVAT, invReg, err := ubl.SellerTaxIDs(inv)
			if err != nil {
				t.Fatal(err)
			}
			moved := m.seller
			if err := e.SetAccounts(fiscaltest.Accounts(moved)); err != nil {
				t.Fatal(err)
			}
			b = fiscaltest.Books(t, e, 0)
			rf, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "1.00"}, "")
			if err != nil {
				t.Fatalf("refund after the move to %s: %v (%s)", m.to, err, fiscaltest.Code(err))
			}
			cn, _, err := refunds.CreditNote(ctx, b, orig.ID, rf.Refund.ID)
			if err != nil {
				t.Fatal(err)
			}
			cnVAT, cnReg, err := ubl.SellerTaxIDs(cn)
			if err != nil {
				t.Fatal(err)
			}
			if cnVAT != invVAT || cnReg != invReg || rf.Refund.CreditNote.TaxCountry != orig.Invoice.TaxCountry || rf.Refund.CreditNote.TaxBasis != orig.Invoice.TaxBasis {
				t.Errorf("credit note under %q (%s), seller ids %q %q; the invoice it amends: under %q (%s), seller ids %q %q",
					rf.Refund.CreditNote.TaxCountry, rf.Refund.CreditNote.TaxBasis, cnVAT, cnReg, orig.Invoice.TaxCountry, orig.Invoice.TaxBasis, invVAT, invReg)
			}
			if bytes.Contains(cn, []byte(moved.VATNumber)) {
				t.Errorf("the credit note names the seller's new number %s, which the invoice does not bear", moved.VATNumber)
			}
			f := filepath.Join(t.TempDir(), "cn.xml")
			if err := os.WriteFile(f, cn, 0o644); err != nil {
				t.Fatal(err)
			}
			validateUBL(t, []string{f}, false)
		})
	}
}

package refunds_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCreditNoteFollowsTheLawOfItsInvoice: an Irish seller's OSS sale to a
// German consumer is invoiced under the Irish rules with its Irish number
// (Art. 219a(2)(b)); after the seller registers in Germany and leaves the
// OSS, a refund of that sale corrects the OSS supply, declared in Ireland:
// its credit note follows the law its invoice followed (the record says
// IE), with the same VAT number, not the German one.
func TestCreditNoteFollowsTheLawOfItsInvoice(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	orig := settleOK(t, b, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"))
	if orig.Invoice == nil || orig.Invoice.TaxCountry != "IE" {
		t.Fatalf("invoice %+v", orig.Invoice)
	}
	s := irishSeller
	s.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationNational, Country: "DE", Number: "DE812847601"}}
	if err := e.SetAccounts(fiscaltest.Accounts(s)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, e, 0)
	res, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "1.00"}, "")
	if err != nil {
		t.Fatalf("refund: %v (%s)", err, fiscaltest.Code(err))
	}
	doc, _, err := refunds.CreditNote(ctx, b, orig.ID, res.Refund.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Refund.CreditNote.TaxCountry != "IE" || bytes.Contains(doc, []byte("DE812847601")) || !bytes.Contains(doc, []byte("IE1234567T")) {
		t.Fatalf("credit note under %s:\n%s", res.Refund.CreditNote.TaxCountry, doc)
	}
}

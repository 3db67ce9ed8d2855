package invoicing_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryChecksTheLawOfEverySupply: a summary invoice follows the
// invoicing rules of the state its supplies were recorded under
// (Record.Invoicing.TaxCountry; Art. 219a Directive 2006/112/EC) and is
// refused when the account's profile now puts a supply under another
// state's rules. A review found that refusal decided on the month's
// latest supply alone: a profile whose registrations change within the
// month (here the member state of identification of the Union scheme,
// dated to end on the 10th) put the earlier supplies under another
// state's rules while the latest stayed, and the summary was issued under
// the latest's state for every supply. Every covered supply is checked:
// the summary is refused (INVOICE_RULES_FAILED, nothing written), naming
// the supply whose rules differ, its day and both states.
func TestSummaryChecksTheLawOfEverySupply(t *testing.T) {
	c := newClock(time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	var recs []*fiscal.Record
	for i := 0; i < 3; i++ {
		res, err := b.Settle(ctx, fiscaltest.Request(i, "1.19", "DE", fmt.Sprintf("2026-04-1%dT10:00:00Z", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		if inv := res.Record.Invoicing; inv == nil || inv.Invoice != "summary" || inv.TaxCountry == "" {
			t.Fatalf("supply %d: invoicing %+v; want a summary", i, inv)
		}
		recs = append(recs, res.Record)
	}
	recorded := recs[0].Invoicing.TaxCountry
	// The profile now dates a Union scheme in DE (the seller's number)
	// until the 10th and in the recorded state from the 11th.
	changed := b.Account().Seller
	changed.OtherEstablishments = []string{"DE"}
	changed.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "DE", ValidTo: "2026-04-10"},
		{Scheme: vat.RegistrationOSSUnion, Country: recorded, ValidFrom: "2026-04-11"},
	}
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(changed)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, b.Engine(), 0)
	now := c.now()
	firstFrame, _, _ := b.InvoiceFrame(recs[0], now)
	latestFrame, _, _ := b.InvoiceFrame(recs[2], now)
	if firstFrame.TaxCountry == recorded || latestFrame.TaxCountry != recorded || firstFrame.Seller.VATNumber != latestFrame.Seller.VATNumber {
		t.Fatalf("the profile decides %s (%s) for the first supply and %s (%s) for the latest; the test needs another state for the first only, under one VAT number",
			firstFrame.TaxCountry, firstFrame.Seller.VATNumber, latestFrame.TaxCountry, latestFrame.Seller.VATNumber)
	}

	c.set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	size := b.Engine().Ledger().Size()
	wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
	res, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-04", Buyer: wallet})
	if err == nil {
		t.Fatalf("summary %s issued under %s's rules for %d supplies; the profile puts the supply %s of %s under %s's",
			res.Summary.ID, res.Summary.Invoice.TaxCountry, res.Summary.Supplied, recs[0].ID, recs[0].Classification.SupplyDate, firstFrame.TaxCountry)
	}
	msg := err.Error()
	if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed || !strings.Contains(msg, recs[0].ID) || !strings.Contains(msg, recs[0].Classification.SupplyDate) ||
		!strings.Contains(msg, firstFrame.TaxCountry) || !strings.Contains(msg, recorded) || strings.Contains(msg, recs[2].ID) {
		t.Fatalf("summary with a supply under another state's rules: %v (%s); want INVOICE_RULES_FAILED naming the supply %s of %s, %s and %s, and not the latest",
			err, fiscaltest.Code(err), recs[0].ID, recs[0].Classification.SupplyDate, firstFrame.TaxCountry, recorded)
	}
	if got := b.Engine().Ledger().Size(); got != size {
		t.Fatalf("the refused summary wrote %d entries", got-size)
	}
}

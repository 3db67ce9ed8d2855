package invoicing_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// newNumber is the Irish seller's VAT number after it changed.
const newNumber = "IE9876543H"

// renumber gives the account of b the VAT number n from now on (its
// profile states only its current number) and returns its new books.
func renumber(t *testing.T, b *fiscal.Books, n string) *fiscal.Books {
	t.Helper()
	s := b.Account().Seller
	s.VATNumber = n
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(s)); err != nil {
		t.Fatal(err)
	}
	return fiscaltest.Books(t, b.Engine(), 0)
}

// TestSummaryShowsTheSellerNumberOfItsSupplies: an invoice states the
// VAT identification number under which the supplier supplied (Art.
// 226(3) Directive 2006/112/EC). A seller whose VAT number changed after
// a month's supplies and before their summary invoice was issued supplied
// under the old one: the summary, and the credit note correcting it,
// state that number, not the profile's current one; a review found the
// summary taking the number from the profile as it is when issued.
func TestSummaryShowsTheSellerNumberOfItsSupplies(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	old := b.Account().Seller.VATNumber
	var ids []string
	for i, day := range []string{"2026-03-10", "2026-03-20"} {
		res, err := b.Settle(ctx, fiscaltest.Request(40+i, "2.38", "DE", day+"T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Record.ID)
	}
	c.set(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	b = renumber(t, b, newNumber)
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil || len(issued) != 1 {
		t.Fatalf("summary: %v %v", issued, err)
	}
	_, doc, err := invoicing.Summary(ctx, b, issued[0].Summary.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := ubl.SellerTaxIDs(doc); n != old {
		t.Errorf("the summary of March states seller VAT number %q; its supplies were made under %q", n, old)
	}
	r, err := refunds.Create(ctx, b, ids[0], refunds.Request{AmountUSDC: "1.00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cn, _, err := refunds.CreditNote(ctx, b, ids[0], r.Refund.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := ubl.SellerTaxIDs(cn); n != old {
		t.Errorf("the credit note correcting the summary states seller VAT number %q; the summary's supplies were made under %q", n, old)
	}
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "summary.xml"), filepath.Join(dir, "cn.xml")}
	for i, d := range [][]byte{doc, cn} {
		if err := os.WriteFile(files[i], d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fiscaltest.ValidateUBL(t, files, false)
}

// TestSummaryOfSuppliesUnderTwoSellerNumbersIsRefused: one invoice states
// one VAT number of the supplier (Art. 226(3)); a month whose supplies were
// made under two (the number changed during the month, in the profile or
// by dated registrations) cannot be summarised in one invoice. The summary
// is refused (INVOICE_RULES_FAILED naming both numbers and what to do),
// nothing is issued, rather than one number stated for supplies made
// under the other.
func TestSummaryOfSuppliesUnderTwoSellerNumbersIsRefused(t *testing.T) {
	for _, how := range []string{"profile", "registrations"} {
		t.Run(how, func(t *testing.T) {
			c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
			first, second := b.Account().Seller.VATNumber, newNumber
			if how == "registrations" {
				// The Union scheme's number, dated: the old one until 15
				// March, the new one from the 16th.
				s := b.Account().Seller
				s.Registrations = []vat.Registration{
					{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: first, ValidTo: "2026-03-15"},
					{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: second, ValidFrom: "2026-03-16"},
				}
				if err := b.Engine().SetAccounts(fiscaltest.Accounts(s)); err != nil {
					t.Fatal(err)
				}
				b = fiscaltest.Books(t, b.Engine(), 0)
			}
			if _, err := b.Settle(ctx, fiscaltest.Request(50, "2.38", "DE", "2026-03-10T10:00:00Z"), ""); err != nil {
				t.Fatal(err)
			}
			if how == "profile" {
				b = renumber(t, b, second)
			}
			res, err := b.Settle(ctx, fiscaltest.Request(51, "2.38", "DE", "2026-03-20T10:00:00Z"), "")
			if err != nil || res.Record.Invoicing == nil || res.Record.Invoicing.Invoice != "summary" {
				t.Fatalf("second supply: %+v %v", res, err)
			}
			c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
			size := b.Engine().Ledger().Size()
			wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
			_, err = issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-03", Buyer: wallet})
			if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), second) {
				t.Fatalf("summary of supplies under %s and %s: %v (%s); want INVOICE_RULES_FAILED naming both", first, second, err, fiscaltest.Code(err))
			}
			if got := b.Engine().Ledger().Size(); got != size {
				t.Errorf("the refused summary wrote %d entries", got-size)
			}
		})
	}
}

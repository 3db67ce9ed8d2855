package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryFollowsItsSuppliesLaw: a summary invoice follows the invoicing
// law its supplies were recorded under (Record.Invoicing.TaxCountry, Art.
// 219a Directive 2006/112/EC; the state whose return declared them), not
// the one the account's profile would decide at issue time. When the
// profile, changed since without dating its registrations, now puts the
// same supplies under another state's rules, the summary is not issued
// under that state: it is refused, naming both states, and nothing is
// issued; once the profile again decides as the records state, it is
// issued under that state.
func TestSummaryFollowsItsSuppliesLaw(t *testing.T) {
	c := newClock(time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	var recorded string
	var first *fiscal.Record
	for i := 0; i < 3; i++ {
		res, err := b.Settle(ctx, fiscaltest.Request(i, "1.19", "DE", fmt.Sprintf("2026-04-1%dT10:00:00Z", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		inv := res.Record.Invoicing
		if inv == nil || inv.Invoice != "summary" || inv.TaxCountry == "" {
			t.Fatalf("supply %d: invoicing %+v; want a summary", i, inv)
		}
		recorded = inv.TaxCountry
		if first == nil {
			first = res.Record
		}
	}
	// The seller leaves the OSS and declares in the state of consumption,
	// its profile saying so without dates: the profile now decides the
	// April supplies under that state's rules.
	old := b.Account().Seller
	moved := old
	moved.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "DE", Number: "DE123456789"}}
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(moved)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, b.Engine(), 0)
	frame, _, _ := b.InvoiceFrame(first, c.now())
	if frame.TaxCountry == recorded {
		t.Fatalf("the changed profile still decides %s: the test needs another state", recorded)
	}

	c.set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
	q := invoicing.SummaryRequest{Period: "2026-04", Buyer: wallet}
	res, err := issueOne(ctx, b, q)
	if err == nil {
		if got := res.Summary.Invoice.TaxCountry; got != recorded {
			t.Fatalf("summary issued under the invoicing rules of %s; its supplies were recorded under %s's", got, recorded)
		}
	} else if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed || !strings.Contains(err.Error(), recorded) || !strings.Contains(err.Error(), frame.TaxCountry) {
		t.Fatalf("summary under a changed profile: %v; want INVOICE_RULES_FAILED naming %s and %s", err, recorded, frame.TaxCountry)
	} else {
		// The month's run, of which this buyer is the only one: nothing
		// is issued, so the run is the error, not a success listing it.
		_, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-04"})
		var run *invoicing.RunError
		if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed || !errors.As(err, &run) || len(run.Failures) != 1 {
			t.Fatalf("the month's run that issues nothing: %v (%T); want INVOICE_RULES_FAILED carrying the run's failures", err, err)
		}
		// Nothing was issued: with the profile as it was, the summary is
		// issued under the records' state, with the series' first number.
		if err := b.Engine().SetAccounts(fiscaltest.Accounts(old)); err != nil {
			t.Fatal(err)
		}
		b = fiscaltest.Books(t, b.Engine(), 0)
		res, err = issueOne(ctx, b, q)
		if err != nil || res.Outcome != fiscal.Created || res.Summary.Invoice.TaxCountry != recorded || !strings.HasSuffix(res.Summary.Invoice.ID, "-000001") {
			t.Fatalf("summary after the profile was restored: %+v, %v; want it Created under %s, numbered first", res, err, recorded)
		}
	}
}

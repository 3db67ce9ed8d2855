package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestInvoicePaymentDateIsOnTheSupplysClock: a German consumer pays at
// 00:30 in Berlin (23:30 UTC the day before). The invoice dates the
// supply (BT-72, Art. 226(7) Directive 2006/112/EC) and its own issue
// (BT-2) on the Berlin day; the payment it states in its note ("Paid in
// full on ...") is the same instant and must be dated on the same clock.
// Dated by the UTC day it read as a payment on the day before the supply:
// a payment on account, on which VAT becomes chargeable when it is
// received (Art. 65), at the rate of that earlier day (Art. 93), which
// is not what the invoice charged.
func TestInvoicePaymentDateIsOnTheSupplysClock(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 3, 10, 23, 31, 0, 0, time.UTC), berlinSeller))
	b := fiscaltest.Books(t, e, 0)
	r := settleOK(t, b, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T23:30:00Z"))
	if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil {
		t.Fatalf("%s %v", r.ReviewStatus, r.ReviewReasons)
	}
	doc, _, err := b.Invoice(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	day := r.Classification.SupplyDate
	if want := "Paid in full on " + day + ":"; day != "2026-03-11" || !strings.Contains(string(doc), want) {
		t.Fatalf("supply of %s (%s): the invoice does not say %q:\n%s", day, r.Classification.TimeZone, want, doc)
	}
}

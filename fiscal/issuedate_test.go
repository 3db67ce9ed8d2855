package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestInvoiceIssueDateIsNotBeforeItsSupply: a German seller's sale to a
// German consumer at 00:30 in Berlin (23:30 UTC the day before) is
// supplied on the Berlin day (BT-72, Art. 226(7)) and invoiced at once:
// the invoice's date of issue (BT-2, Art. 226(1)) is that same day, read
// on the same clock, never the UTC day before, which would date the
// invoice before the supply it invoices.
func TestInvoiceIssueDateIsNotBeforeItsSupply(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 3, 10, 23, 31, 0, 0, time.UTC), berlinSeller))
	b := fiscaltest.Books(t, e, 0)
	r := settleOK(t, b, fiscaltest.Request(1, "11.90", "DE", "2026-03-10T23:30:00Z"))
	if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil {
		t.Fatalf("%s %v", r.ReviewStatus, r.ReviewReasons)
	}
	if r.Classification.SupplyDate != "2026-03-11" {
		t.Fatalf("supply date %s, want the Berlin day 2026-03-11", r.Classification.SupplyDate)
	}
	doc, _, err := b.Invoice(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Invoice.IssueDate != "2026-03-11" || !strings.Contains(string(doc), "<cbc:IssueDate>2026-03-11</cbc:IssueDate>") {
		t.Fatalf("invoice issued %s (record) for a supply of %s, issued at 00:31 Berlin time:\n%s", r.Invoice.IssueDate, r.Classification.SupplyDate, doc)
	}
}

// TestInvoiceNumberYearIsItsIssueDatesYear: at 23:30 UTC on New Year's Eve
// it is already 1 January in Berlin; the German sale's invoice is dated
// 2026-01-01 and is numbered in the 2026 series, not as one of 2026's
// invoices in 2025's series (a number whose year contradicts its date).
func TestInvoiceNumberYearIsItsIssueDatesYear(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2025, 12, 31, 23, 31, 0, 0, time.UTC), berlinSeller))
	b := fiscaltest.Books(t, e, 0)
	r := settleOK(t, b, fiscaltest.Request(1, "11.90", "DE", "2025-12-31T23:30:00Z"))
	if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil {
		t.Fatalf("%s %v", r.ReviewStatus, r.ReviewReasons)
	}
	if r.Invoice.IssueDate != "2026-01-01" || !strings.HasPrefix(r.Invoice.ID, fiscal.DefaultInvoicePrefix+"2026-") {
		t.Fatalf("invoice %s dated %s: want the 2026 series for a document dated 2026-01-01", r.Invoice.ID, r.Invoice.IssueDate)
	}
}

// berlinSeller is a German seller established in Berlin only.
var berlinSeller = fiscal.Seller{LegalName: "Kleine GmbH", VATNumber: "DE812847601", LegalID: "HRB 1", Country: "DE",
	Address: fiscal.Address{Street: "Str. 1", City: "Berlin", PostalCode: "10115"}}

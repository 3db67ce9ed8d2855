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
)

// TestSummaryOfOneSupplySaysSupply: a consumer who paid once in the month
// gets a summary of that one supply. Its line (BT-153, the nature of the
// service, Art. 226(6) Directive 2006/112/EC) and note read "1 supplies"
// on the customer's invoice; they say "1 supply".
func TestSummaryOfOneSupplySaysSupply(t *testing.T) {
	c := newClock(time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	if _, err := b.Settle(ctx, fiscaltest.Request(1, "0.50", "DE", "2026-04-10T10:00:00Z"), ""); err != nil {
		t.Fatal(err)
	}
	c.set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-04"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Summary.Supplied != 1 {
		t.Fatalf("%d summaries; want one of one supply", len(res))
	}
	for _, r := range res {
		_, u, err := invoicing.Summary(ctx, b, r.Summary.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Summary invoice of 1 supply from ", ": 1 supply, "} {
			if !strings.Contains(string(u), want) {
				t.Errorf("the summary of one supply does not say %q:\n%s", want, u)
			}
		}
		file := filepath.Join(t.TempDir(), "one-supply.xml")
		if err := os.WriteFile(file, u, 0o600); err != nil {
			t.Fatal(err)
		}
		fiscaltest.ValidateUBL(t, []string{file}, false)
		if strings.Contains(string(u), " 1 supplies") {
			t.Errorf("the summary says \"1 supplies\":\n%s", u)
		}
	}
}

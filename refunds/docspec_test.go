package refunds_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestDocsNameTheIssuedReceiptSpec: the package docs an embedder reads
// (refunds/doc.go on Refund.Receipt, fiscal/doc.go on a record's receipt)
// name the receipt version the engine issues; they said 3.0.0 after the
// engine had moved to 4.0.0.
func TestDocsNameTheIssuedReceiptSpec(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	b := fiscaltest.Books(t, e, 0)
	rec := settleOK(t, b, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"))
	res, err := refunds.Create(ctx, b, rec.ID, refunds.Request{AmountUSDC: "5.00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, pattern, issued string
	}{
		{"doc.go", `Refund\.Receipt is the refund's\s+(service\.receipt/[0-9.]+[0-9])`, res.Refund.Receipt.Spec},
		{"../fiscal/doc.go", `Receipts are\s+(?://\s*)?(service\.receipt/[0-9.]+[0-9])`, rec.Receipt.Spec},
	} {
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.pattern).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s no longer names the receipt spec (%s)", c.file, c.pattern)
			continue
		}
		if got := strings.TrimSpace(string(m[1])); got != c.issued {
			t.Errorf("%s says receipts are %s; the engine issues %s", c.file, got, c.issued)
		}
	}
}

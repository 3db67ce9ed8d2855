package invoicelaw_test

import (
	"fmt"
	"testing"

	"github.com/fiscal402/fiscal402/invoicelaw"
)

// TestCheckReadsTheSellerAsDetermineDoes: a seller established in Monaco
// is established in France, one in the Isle of Man in the United Kingdom
// (Art. 7(1) Directive 2006/112/EC; VAT Notice 741A), and the engine
// invoices their sales under French, respectively UK, rules. Check tells
// an account before any sale which of its invoices could not be issued,
// under the rules of its state of establishment; reading the raw codes MC
// and IM it checked no rules at all, so such a seller lacking what every
// invoice needs was told nothing and found its sales waiting for review.
func TestCheckReadsTheSellerAsDetermineDoes(t *testing.T) {
	for _, c := range []struct {
		treated, as string
		seller      invoicelaw.Seller
	}{
		{"MC", "FR", invoicelaw.Seller{LegalName: "X SAM"}},
		{"IM", "GB", invoicelaw.Seller{LegalName: "X Ltd", VATNumber: "GB980780684", LegalID: "CRN 1"}},
	} {
		parent := c.seller
		parent.Country = c.as
		want := invoicelaw.Check(parent)
		if want == nil {
			t.Fatalf("%s: the seller in %s is invoiceable throughout; the test needs one that is not", c.treated, c.as)
		}
		s := c.seller
		s.Country = c.treated
		if got := invoicelaw.Check(s); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("seller in %s: %v\nthe same seller in %s: %v", c.treated, got, c.as, want)
		}
	}
}

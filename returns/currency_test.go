package returns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReturnOfANonEuroStateOfIdentificationIsReviewed: "The VAT return
// shall be made out in euro. Member States which have not adopted the euro
// may require the VAT return to be made out in their national currency"
// (Art. 369h(1) Directive 2006/112/EC for the Union scheme, Art. 366(1)
// for the non-Union scheme), a determination that applies to every
// taxable person using the schemes there (Art. 61c Implementing
// Regulation (EU) No 282/2011). Which states require it the engine does
// not hold: a Swedish seller's return, identified in Sweden, is in euro
// and must say that the state may require kronor, with the articles,
// before it is filed. An Irish seller's return needs no such review.
func TestReturnOfANonEuroStateOfIdentificationIsReviewed(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.VATNumber, seller.LegalID = "Svensk Digital AB", "SE", "SE556677889901", "556677-8899"
	seller.Address = fiscal.Address{Street: "Drottninggatan 1", City: "Stockholm", PostalCode: "111 51"}
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "SE", Number: "SE556677889901"},
		{Scheme: vat.RegistrationNational, Country: "SE", Number: "SE556677889901"},
	}
	cfg := fiscaltest.Config(t, testNow, seller)
	cfg.FX = fiscaltest.SyntheticFX(t) // the invoice states its VAT in kronor too (Art. 230)
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	recs := settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"})
	if recs[0].ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("sale %s %+v", recs[0].ReviewStatus, recs[0].ReviewReasons)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "SE" || len(ret.Lines) != 1 {
		t.Fatalf("identification %+v, lines %+v", ret.ID, ret.Lines)
	}
	review := strings.Join(ret.Review, " ")
	if !strings.Contains(review, "SEK") || !strings.Contains(review, "369h(1)") || !strings.Contains(review, "61c") {
		t.Errorf("review %q: the return is in euro and Sweden may require kronor (Art. 369h(1), Art. 61c)", ret.Review)
	}

	irish, _, err := returns.OSS(context.Background(), newBooks(t, testNow), q1, returns.Options{})
	if err != nil || len(irish.Review) != 0 {
		t.Errorf("an Irish return: review %q, %v", irish.Review, err)
	}
}

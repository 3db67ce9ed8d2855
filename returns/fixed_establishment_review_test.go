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

// TestUnattributedFixedEstablishmentIsReviewed: a Union return shows the
// services supplied from fixed establishments in member states other than
// the member state of identification apart, with each establishment's VAT
// identification number (Art. 369g(3) Directive 2006/112/EC). A German
// seller states a fixed establishment in France; a settlement does not say
// from which establishment its service was supplied, and the record names
// the seller's establishment in Germany. The return counted the Italian
// sale as supplied from Germany and said nothing of France: a return with
// no French section, presented as complete. The engine cannot decide it,
// so the return says so, naming the establishment and the article.
func TestUnattributedFixedEstablishmentIsReviewed(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.VATNumber = "DE Apps GmbH", "DE", "DE136695976"
	seller.Address.Country = "DE"
	seller.OtherEstablishments = []string{"FR"}
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "DE", Number: "DE136695976"},
		{Scheme: vat.RegistrationNational, Country: "DE", Number: "DE136695976"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller)), 0)
	recs := settle(t, b, 1, sale{amount: "12.20", country: "IT", at: "2026-02-10T10:00:00Z"})
	if c := recs[0].Classification; recs[0].ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C {
		t.Fatalf("sale %s %s", recs[0].ReviewStatus, c.Regime)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "DE" || len(ret.Lines) != 1 || len(ret.FixedEstablishments) != 0 {
		t.Fatalf("identification %+v, lines %+v, sections %+v: want the Italian sale among Germany's supplies", ret.ID, ret.Lines, ret.FixedEstablishments)
	}
	found := false
	for _, s := range ret.Review {
		found = found || strings.Contains(s, "FR") && strings.Contains(s, "369g(3)")
	}
	if !found {
		t.Errorf("review %q: want the fixed establishment in FR, which no record names, said (Art. 369g(3))", ret.Review)
	}
}

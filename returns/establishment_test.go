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

// TestEstablishmentOutsideTheEUIsNoSection: a business established in the
// United States with a fixed establishment in Ireland uses the Union
// scheme, identified in Ireland (Art. 369a(2) Directive 2006/112/EC). The
// Union return has the supplies from the member state of identification
// and, apart, those from fixed establishments "in Member States other
// than the Member State of identification" (Art. 369g(1), (3)); there is
// no section for an establishment outside the EU. Its records name the
// seller's country, US: the return put them in a fixed-establishment
// section "US". They are now among the member state of identification's
// supplies, and the return says, in review, which establishment the
// records name and why, for a person to check.
func TestEstablishmentOutsideTheEUIsNoSection(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.LegalID = "US Apps Inc", "US", "US-EIN-1"
	seller.OtherEstablishments = []string{"IE"}
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	b := fiscaltest.Books(t, e, 0)
	recs := settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"})
	if c := recs[0].Classification; recs[0].ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C || c.Scheme != vat.SchemeUnion {
		t.Fatalf("sale %s %s %s", recs[0].ReviewStatus, c.Regime, c.Scheme)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ret.FixedEstablishments {
		if !vat.IsMemberState(s.Establishment) {
			t.Errorf("a fixed-establishment section for %s, which is no member state (Art. 369g(3)): %+v", s.Establishment, s)
		}
	}
	if ret.ID.MemberState != "IE" || len(ret.Lines) != 1 || ret.Lines[0].MemberState != "DE" || ret.Lines[0].LedgerIndexes[0] != recs[0].Ledger.Index {
		t.Errorf("lines %+v: want the German sale among the supplies from the member state of identification", ret.Lines)
	}
	if review := strings.Join(ret.Review, "\n"); !strings.Contains(review, "US") || !strings.Contains(review, "369g") {
		t.Errorf("review %q: want the records naming an establishment outside the EU said", ret.Review)
	}
}

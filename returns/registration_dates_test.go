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

// TestRegistrationDatesSplitTheQuarter: an Irish seller in the Union OSS
// until 28 February that registers in France from 1 March (and leaves the
// OSS, Art. 57g Implementing Regulation (EU) No 282/2011) declares its
// February sale to a French consumer in the OSS return and its March one
// in the French return. Each invoice follows the registration of its day
// (Art. 219a Directive 2006/112/EC), and the quarter's OSS return is
// Ireland's.
func TestRegistrationDatesSplitTheQuarter(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", ValidTo: "2026-02-28"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045", ValidFrom: "2026-03-01"},
	}
	b, _ := ossSalesUnder(t, seller, []string{"IE", "FR"},
		sale{amount: "12.00", country: "FR", at: "2026-02-10T10:00:00Z"},
		sale{amount: "24.00", country: "FR", at: "2026-03-10T10:00:00Z"})
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "IE" || strings.Contains(ret.ID.Missing, "59(4)") {
		t.Errorf("identification %+v, want Ireland, unchanged", ret.ID)
	}
	if len(ret.Lines) != 1 || ret.Lines[0].Records != 1 || ret.Lines[0].AmountUSDC != "12.000000" {
		t.Errorf("OSS lines %+v, want the February sale alone (12.00 USDC)", ret.Lines)
	}
	var national []returns.Summary
	for _, s := range ret.NotInOSS {
		if s.Country == "FR" {
			national = append(national, s)
		}
	}
	if len(national) != 1 || national[0].Records != 1 {
		t.Errorf("notInOss %+v, want the March sale, declared in France", ret.NotInOSS)
	}
}

// TestReturnNamesAChangeOfStateOfIdentification: a seller whose member
// state of identification moved from France to Ireland on 1 February
// (Art. 57f(2) Implementing Regulation (EU) No 282/2011) owes each state a
// return for the supplies of its days (Art. 59(4)). The first quarter's
// return is Ireland's and says so; the fourth quarter of 2025 is France's.
func TestReturnNamesAChangeOfStateOfIdentification(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "FR", Number: "FR40303265045", ValidTo: "2026-01-31"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", ValidFrom: "2026-02-01"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	b := fiscaltest.Books(t, e, 0)
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "IE" || ret.ID.Number != "IE1234567T" || !strings.Contains(ret.ID.Missing, "Art. 59(4)") || !strings.Contains(ret.ID.Missing, "FR, IE") && !strings.Contains(ret.ID.Missing, "IE, FR") {
		t.Errorf("2026-Q1 identification %+v, want Ireland, naming the change from France", ret.ID)
	}
	q4, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2025, Quarter: 4}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q4.ID.MemberState != "FR" || q4.ID.Number != "FR40303265045" || q4.ID.Missing != "" {
		t.Errorf("2025-Q4 identification %+v, want France's", q4.ID)
	}
}

// ossSalesUnder records sales for seller, each of which must be a
// processed OSS_B2C supply invoiced under the law of the state of its
// place in lawOf (Art. 219a Directive 2006/112/EC): the books and the
// records.
func ossSalesUnder(t *testing.T, seller fiscal.Seller, lawOf []string, sales ...sale) (*fiscal.Books, []*fiscal.Record) {
	t.Helper()
	b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller)), 0)
	recs := settle(t, b, 1, sales...)
	for i, r := range recs {
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C || r.Invoice == nil || r.Invoice.TaxCountry != lawOf[i] {
			t.Fatalf("sale %d: %s %s invoice %+v %v, want processed OSS_B2C invoiced under %s's law", i, r.ReviewStatus, r.Classification.Regime, r.Invoice, r.ReviewReasons, lawOf[i])
		}
	}
	return b, recs
}

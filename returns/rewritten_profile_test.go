package returns_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRewrittenProfileLeavesTheSuppliesWithTheirStateOfIdentification: a
// seller established in France, identified there for the Union OSS, made
// its first quarter's supplies under its French VAT number, invoiced under
// French law as the member state of identification's (Art. 219a(2)(b)
// Directive 2006/112/EC). Before the return is made the profile is
// rewritten for a move to Ireland (establishment, VAT number and OSS
// registration in Ireland, undated). A change of the member state of
// identification applies from the day it happened (Art. 57f Implementing
// Regulation (EU) No 282/2011), and the supplies were made while France
// was it: each state's return covers the supplies of its own days (Art.
// 59(4)). So Ireland's return (the profile's, asked for by name: the one
// asked for without a state is France's,
// TestRewrittenProfileDefaultsToTheRecordsState) counts them in
// excluded.otherState, saying that the profile contradicts them, and
// France's, asked for by name although the profile no longer states it,
// declares them under the number the records kept (Art. 369d). A previous
// version declared them in Ireland's return, in a section for a French
// establishment, following the rewritten profile.
func TestRewrittenProfileLeavesTheSuppliesWithTheirStateOfIdentification(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.VATNumber, seller.LegalID = "Demo Digital Services SARL", "FR", "FR40303265045", ""
	seller.Address = fiscal.Address{Street: "1 rue de la Demo", City: "Paris", PostalCode: "75001"}
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "FR", Number: "FR40303265045"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	recs := settle(t, fiscaltest.Books(t, e, 0), 1, sale{amount: "12.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	if r := recs[0]; r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C || r.Seller.VATNumber != seller.VATNumber || r.Invoice == nil || r.Invoice.TaxCountry != "FR" {
		t.Fatalf("sale: %s %s seller %q invoice %+v %v", r.ReviewStatus, r.Classification.Regime, r.Seller.VATNumber, r.Invoice, r.ReviewReasons)
	}
	later := ossSeller() // the Irish seller, OSS in Ireland
	if err := e.SetAccounts(fiscaltest.Accounts(later)); err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	ie, _, err := returns.OSS(context.Background(), b, q1, returns.Options{MemberState: "IE"})
	if err != nil {
		t.Fatal(err)
	}
	index := recs[0].Ledger.Index
	if ie.ID.MemberState != "IE" || len(ie.Lines)+len(ie.FixedEstablishments) != 0 || !slices.Equal(ie.Excluded.OtherState.LedgerIndexes, []int64{index}) {
		t.Errorf("Ireland's return: identification %+v, lines %+v, sections %+v, other state %+v: want the French supply in excluded.otherState", ie.ID, ie.Lines, ie.FixedEstablishments, ie.Excluded.OtherState)
	}
	if review := strings.Join(ie.Review, "\n"); !strings.Contains(review, fmt.Sprintf("[%d]", index)) || !strings.Contains(review, "profile") {
		t.Errorf("Ireland's review %q: want the supply named as made under registrations the profile no longer states", ie.Review)
	}
	fr, _, err := returns.OSS(context.Background(), b, q1, returns.Options{MemberState: "FR"})
	if err != nil {
		t.Fatalf("France's return, its supplies' state of identification: %v", err)
	}
	if fr.Scheme != vat.SchemeUnion || fr.ID.MemberState != "FR" || fr.ID.Number != recs[0].Seller.VATNumber || !strings.Contains(fr.ID.Missing, "profile") ||
		len(fr.Lines) != 1 || !slices.Equal(fr.Lines[0].LedgerIndexes, []int64{index}) {
		t.Errorf("France's return: scheme %s identification %+v lines %+v: want the French supply under %s", fr.Scheme, fr.ID, fr.Lines, recs[0].Seller.VATNumber)
	}
	if _, _, err := returns.OSS(context.Background(), b, q1, returns.Options{MemberState: "DE"}); !isBadRequest(err, "memberStateOfIdentification") {
		t.Errorf("Germany, under which no supply was declared: %v, want BAD_REQUEST", err)
	}
}

package returns_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReturnLeavesOutTheFormerStatesDays: a seller established outside
// the EU whose non-Union OSS member state of identification moved from
// France to Ireland on 1 February owes France a return for January's
// supplies and Ireland one for February's and March's (Art. 59(4)
// Implementing Regulation (EU) No 282/2011). The first quarter's return is
// Ireland's: it declares the February sale and not the January one, which
// it counts as excluded (another state's days) rather than declaring it
// to Ireland; a review found both in Ireland's lines while the return said
// it was Ireland's alone.
func TestReturnLeavesOutTheFormerStatesDays(t *testing.T) {
	seller := fiscal.Seller{LegalName: "Example Inc.", Country: "US", LegalID: "US-EIN-123456789", OverThreshold: true,
		Address: fiscal.Address{Street: "1 Main Street", City: "Springfield", PostalCode: "12345"},
		Registrations: []vat.Registration{
			{Scheme: vat.RegistrationOSSNonUnion, Country: "FR", Number: "EU250000001", ValidTo: "2026-01-31"},
			{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372000041", ValidFrom: "2026-02-01"},
		}}
	b, recs := ossSalesUnder(t, seller, []string{"FR", "IE"},
		sale{amount: "12.00", country: "DE", at: "2026-01-15T10:00:00Z"},
		sale{amount: "24.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "IE" {
		t.Fatalf("identification %+v, want Ireland", ret.ID)
	}
	var declared []int64
	for _, l := range ret.Lines {
		declared = append(declared, l.LedgerIndexes...)
	}
	if !slices.Contains(declared, recs[1].Ledger.Index) || slices.Contains(declared, recs[0].Ledger.Index) {
		t.Errorf("Ireland's lines hold entries %v, want the February sale (%d) and not January's (%d), France's", declared, recs[1].Ledger.Index, recs[0].Ledger.Index)
	}
	if ex := ret.Excluded.OtherState; ex.Records != 1 || !slices.Contains(ex.LedgerIndexes, recs[0].Ledger.Index) {
		t.Errorf("excluded for another state %+v, want the January sale", ex)
	}
	// Refunds of both sales, recorded in the second quarter: the February
	// sale's corrects Ireland's return; the January sale's is not
	// Ireland's to correct (France declared the sale).
	rfJan, rfFeb := refund(t, b, recs[0].ID, "2.00", ""), refund(t, b, recs[1].ID, "3.00", "")
	q2, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var corrected []int64
	for _, c := range q2.Corrections {
		corrected = append(corrected, c.LedgerIndexes...)
	}
	if !slices.Contains(corrected, rfFeb.Ledger.Index) || slices.Contains(corrected, rfJan.Ledger.Index) {
		t.Errorf("2026-Q2 corrections hold entries %v, want the February sale's refund (%d) and not the January sale's (%d)", corrected, rfFeb.Ledger.Index, rfJan.Ledger.Index)
	}
	if ex := q2.Excluded.OtherState; ex.Records != 1 || !slices.Contains(ex.LedgerIndexes, rfJan.Ledger.Index) {
		t.Errorf("2026-Q2 excluded for another state %+v, want the January sale's refund", ex)
	}
}

// TestReturnCSVListsTheFormerStatesDays: the CSV form lists the supplies
// left to another state's return as its own section, as the JSON does.
func TestReturnCSVListsTheFormerStatesDays(t *testing.T) {
	r := &returns.Return{Excluded: returns.Excluded{OtherState: returns.Bucket{Records: 1, AmountUSDC: "12.000000", LedgerIndexes: []int64{7}}}}
	var buf strings.Builder
	if err := returns.WriteCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), returns.SectionOtherState+",") || !strings.Contains(buf.String(), "12.000000") {
		t.Errorf("CSV lacks the other state's bucket:\n%s", buf.String())
	}
}

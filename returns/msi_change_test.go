package returns_test

import (
	"context"
	"errors"
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
	// Ireland's to correct (France declared the sale, and France, the
	// member state of identification on no day of the second quarter,
	// has no return of it: TestFormerStateOfIdentificationsReturn).
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
	if ex := q2.Excluded.FormerState; ex.Records != 1 || !slices.Contains(ex.LedgerIndexes, rfJan.Ledger.Index) {
		t.Errorf("2026-Q2 excluded for a former state %+v, want the January sale's refund", ex)
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

// TestFormerStateOfIdentificationsReturn: the seller's non-Union OSS
// member state of identification moved from France to Ireland on 1
// February. Art. 59(4) Implementing Regulation (EU) No 282/2011 asks a
// return of "both the former and the new Member State of identification
// covering the supplies made during the respective periods". Each can be
// produced (Options.MemberState), with the same shape as any return: France's
// declares the January sale under France's number and counts February's as
// another state's; Ireland's (the default, the state of the quarter's last
// day) the reverse; together they declare every sale once. A state that
// was not the member state of identification on any day of the quarter has
// no return to produce. A review found only the new state's return
// producible: the former state's days were counted and declared nowhere.
//
// A refund recorded in the second quarter of a January sale corrects a
// return of France's, which filed its final return for the first quarter:
// corrections arising after the final return "shall be discharged directly
// with the tax authorities of the Member State of consumption" (Art.
// 61a(1) second subparagraph). It is in no return's corrections, but
// counted in excluded.formerState with that reason, to be reviewed.
func TestFormerStateOfIdentificationsReturn(t *testing.T) {
	seller := fiscal.Seller{LegalName: "Example Inc.", Country: "US", LegalID: "US-EIN-123456789", OverThreshold: true,
		Address: fiscal.Address{Street: "1 Main Street", City: "Springfield", PostalCode: "12345"},
		Registrations: []vat.Registration{
			{Scheme: vat.RegistrationOSSNonUnion, Country: "FR", Number: "EU250000001", ValidTo: "2026-01-31"},
			{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372000041", ValidFrom: "2026-02-01"},
		}}
	b, recs := ossSalesUnder(t, seller, []string{"FR", "FR", "IE"},
		sale{amount: "12.00", country: "DE", at: "2026-01-15T10:00:00Z"},
		sale{amount: "6.00", country: "AT", at: "2026-01-20T10:00:00Z"},
		sale{amount: "24.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	ctx := context.Background()
	indexes := func(lines []returns.Line) []int64 {
		var out []int64
		for _, l := range lines {
			out = append(out, l.LedgerIndexes...)
		}
		slices.Sort(out)
		return out
	}
	fr, frDoc, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "FR"})
	if err != nil {
		t.Fatalf("France's return of 2026-Q1: %v", err)
	}
	if fr.Scheme != vat.SchemeNonUnion || fr.ID.MemberState != "FR" || fr.ID.Number != "EU250000001" || fr.ID.From != "2026-01-01" || fr.ID.To != "2026-01-31" {
		t.Errorf("France's identification %+v (scheme %s), want FR, EU250000001, 2026-01-01 to 2026-01-31", fr.ID, fr.Scheme)
	}
	if got, want := indexes(fr.Lines), []int64{recs[0].Ledger.Index, recs[1].Ledger.Index}; !slices.Equal(got, want) {
		t.Errorf("France's lines hold %v, want the January sales %v", got, want)
	}
	if ex := fr.Excluded.OtherState; ex.Records != 1 || !slices.Equal(ex.LedgerIndexes, []int64{recs[2].Ledger.Index}) {
		t.Errorf("France's return counts %+v for another state, want the February sale", ex)
	}
	if len(fr.MemberStates) != 2 || fr.Total.Records != 2 || fr.Total.AmountUSDC != "18.000000" || frDoc == nil || frDoc.JWS == "" {
		t.Errorf("France's return: states %+v total %+v signed %v", fr.MemberStates, fr.Total, frDoc != nil)
	}
	ie, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "IE"})
	if err != nil {
		t.Fatal(err)
	}
	def, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ie.ID != def.ID || !slices.Equal(indexes(ie.Lines), indexes(def.Lines)) {
		t.Errorf("Ireland's return asked by name %+v differs from the default %+v", ie.ID, def.ID)
	}
	if ie.ID.MemberState != "IE" || ie.ID.Number != "EU372000041" || ie.ID.From != "2026-02-01" || ie.ID.To != "2026-03-31" ||
		!slices.Equal(indexes(ie.Lines), []int64{recs[2].Ledger.Index}) || ie.Excluded.OtherState.Records != 2 {
		t.Errorf("Ireland's return: identification %+v lines %v other state %+v", ie.ID, indexes(ie.Lines), ie.Excluded.OtherState)
	}
	for _, ms := range []string{"DE", "GB", "fr "} {
		if _, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: ms}); !isBadRequest(err, "memberStateOfIdentification") {
			t.Errorf("member state %q, never the state of identification in 2026-Q1: %v, want BAD_REQUEST on memberStateOfIdentification", ms, err)
		}
	}

	rfJan, rfFeb := refund(t, b, recs[0].ID, "2.00", ""), refund(t, b, recs[2].ID, "3.00", "")
	q2 := returns.Period{Year: 2026, Quarter: 2}
	if _, _, err := returns.OSS(ctx, b, q2, returns.Options{MemberState: "FR"}); !isBadRequest(err, "memberStateOfIdentification") {
		t.Errorf("France's return of 2026-Q2, after France stopped being the state of identification: %v, want BAD_REQUEST", err)
	}
	ie2, _, err := returns.OSS(ctx, b, q2, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var corrected []int64
	for _, c := range ie2.Corrections {
		corrected = append(corrected, c.LedgerIndexes...)
	}
	if !slices.Equal(corrected, []int64{rfFeb.Ledger.Index}) {
		t.Errorf("Ireland's 2026-Q2 corrections hold %v, want only the February sale's refund %d", corrected, rfFeb.Ledger.Index)
	}
	fs := ie2.Excluded.FormerState
	if fs.Records != 1 || !slices.Equal(fs.LedgerIndexes, []int64{rfJan.Ledger.Index}) || !strings.Contains(fs.Reason, "Art. 61a(1)") || ie2.Excluded.OtherState.Records != 0 {
		t.Errorf("Ireland's 2026-Q2 excluded: former state %+v other state %+v; want the January sale's refund, with the Art. 61a(1) reason", fs, ie2.Excluded.OtherState)
	}
}

// isBadRequest reports whether err is BAD_REQUEST on field.
func isBadRequest(err error, field string) bool {
	var fe *fiscal.Error
	return errors.As(err, &fe) && fe.Code == fiscal.CodeBadRequest && fe.Field == field
}

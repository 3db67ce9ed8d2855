package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestLinesStateTheRateType: the common electronic message of the OSS
// return gives, per member state of consumption, the standard and the
// reduced rate apart, with the taxable amount and VAT at each (Annex III
// Commission Implementing Regulation (EU) 2020/194, to which Art. 4 of it
// binds the return; Art. 369g(2) Directive 2006/112/EC: "broken down by
// rate"). Each record keeps the type of the rate it was charged at
// (Determination.RateKind: the rate type of the OSS return). A German
// standard-rated sale and a German e-book at the reduced rate are two
// lines, and a refund of an Austrian e-book of Q4 2025 is a correction at
// the reduced rate: each must say which type its rate is, as its records
// do, in the JSON and in the CSV. The return dropped it, leaving the filer
// to guess from the percentage.
func TestLinesStateTheRateType(t *testing.T) {
	ctx := context.Background()
	b, set := newBooksClock(t, time.Date(2025, 11, 20, 12, 0, 0, 0, time.UTC))
	old := settle(t, b, 1, sale{amount: "11.00", country: "AT", kind: "ebook", at: "2025-11-10T09:00:00Z"})[0]
	set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	recs := settle(t, b, 2, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"},
		sale{amount: "10.70", country: "DE", kind: "ebook", at: "2026-02-11T10:00:00Z"})
	refund(t, b, old.ID, "", "r-at")
	set(testNow)
	kinds := map[int64]string{}
	for _, r := range append(recs, old) {
		kinds[r.Ledger.Index] = r.Classification.RateKind
	}
	if kinds[recs[0].Ledger.Index] == kinds[recs[1].Ledger.Index] || kinds[old.Ledger.Index] == "" {
		t.Fatalf("rate kinds %v: want the records' own, two kinds", kinds)
	}
	ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Lines) != 2 || len(ret.Corrections) != 1 {
		t.Fatalf("lines %+v corrections %+v: want two German lines and one Austrian correction", ret.Lines, ret.Corrections)
	}
	want := map[string]string{} // member state|rate → type, as the records say
	for _, l := range ret.Lines {
		if len(l.LedgerIndexes) != 1 {
			t.Fatalf("line %+v: want one record", l)
		}
		want[l.MemberState+"|"+l.RatePercent] = kinds[l.LedgerIndexes[0]]
		if l.RateType != kinds[l.LedgerIndexes[0]] {
			t.Errorf("line %s %s%%: rate type %q, its record's %q", l.MemberState, l.RatePercent, l.RateType, kinds[l.LedgerIndexes[0]])
		}
	}
	c := ret.Corrections[0]
	want[c.OriginalPeriod+"|"+c.MemberState+"|"+c.RatePercent] = kinds[old.Ledger.Index]
	if c.RateType != kinds[old.Ledger.Index] || c.RateType != vat.RateKindReduced {
		t.Errorf("correction %s %s %s%%: rate type %q, the refunded e-book's %q", c.OriginalPeriod, c.MemberState, c.RatePercent, c.RateType, kinds[old.Ledger.Index])
	}

	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if _, ok := col["rateType"]; !ok {
		t.Fatalf("CSV header %q has no rateType", rows[0])
	}
	seen := 0
	for _, r := range rows[1:] {
		k := r[col["memberState"]] + "|" + r[col["ratePercent"]]
		switch r[col["section"]] {
		case returns.SectionCorrection:
			k = r[col["originalPeriod"]] + "|" + k
		case returns.SectionLine:
		default:
			continue
		}
		seen++
		if r[col["rateType"]] != want[k] {
			t.Errorf("CSV row %q: rate type %q, want %q", r, r[col["rateType"]], want[k])
		}
	}
	if seen != 3 {
		t.Errorf("%d CSV rows of lines and corrections, want 3", seen)
	}
}

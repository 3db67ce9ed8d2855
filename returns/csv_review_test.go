package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/returns"
)

// TestCSVCarriesTheReview: the CSV form of a return carries what a person
// must check before filing (Return.Review) as rows of section "review",
// the text in column "note", before the figures: a person who reads only
// the CSV is warned as the JSON's reader is. The excluded buckets' reasons
// are in the same column. Until this version the CSV had no review at all.
func TestCSVCarriesTheReview(t *testing.T) {
	b, set := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-03-20T10:00:00Z"})
	set(time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC))
	settle(t, b, 2, sale{amount: "23.80", country: "FR", at: "2026-03-20T11:00:00Z"}) // a Q1 sale recorded in Q2
	settle(t, b, 3, sale{amount: "5.00", country: "DE", at: "2026-05-09T11:00:00Z"})
	set(time.Date(2026, 7, 5, 12, 0, 0, 0, time.UTC))
	ret, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Review) == 0 {
		t.Fatal("the scenario's return has no review line to carry")
	}
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	section, note := slices.Index(rows[0], "section"), slices.Index(rows[0], "note")
	if section < 0 || note < 0 {
		t.Fatalf("header %v: want a section and a note column", rows[0])
	}
	var review []string
	figures := false
	for _, row := range rows[1:] {
		if row[0] != ret.Period || row[4] != ret.ID.MemberState {
			t.Errorf("row %v does not name the return", row)
		}
		if row[section] != returns.SectionReview {
			figures = true
			continue
		}
		if figures {
			t.Errorf("review row %v after the figures: want the warnings first", row)
		}
		review = append(review, row[note])
	}
	if !slices.Equal(review, ret.Review) {
		t.Errorf("CSV review rows %q, want the return's review %q", review, ret.Review)
	}
}

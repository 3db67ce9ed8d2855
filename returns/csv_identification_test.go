package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCSVSaysWhatTheIdentificationLacks: the seller's non-Union member
// state of identification moved from France to Ireland on 1 February, so
// Ireland's return of the first quarter covers 1 February to 31 March only
// (Art. 59(4) Implementing Regulation (EU) No 282/2011), which the JSON
// says in identification.from, .to and .missing. WriteCSV promises that a
// reader of the CSV alone is warned as the JSON's is, but its rows named
// the quarter and Ireland's number and nothing of the days left to France:
// a CSV presenting Ireland's part of the quarter as the whole. The CSV
// now carries identification.missing as a row of section "review".
func TestCSVSaysWhatTheIdentificationLacks(t *testing.T) {
	seller := fiscal.Seller{LegalName: "Example Inc.", Country: "US", LegalID: "US-EIN-123456789", OverThreshold: true,
		Address: fiscal.Address{Street: "1 Main Street", City: "Springfield", PostalCode: "12345"},
		Registrations: []vat.Registration{
			{Scheme: vat.RegistrationOSSNonUnion, Country: "FR", Number: "EU250000001", ValidTo: "2026-01-31"},
			{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372000041", ValidFrom: "2026-02-01"},
		}}
	b, _ := ossSalesUnder(t, seller, []string{"FR", "IE"},
		sale{amount: "12.00", country: "DE", at: "2026-01-15T10:00:00Z"},
		sale{amount: "24.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "IE" || ret.ID.From != "2026-02-01" || ret.ID.Missing == "" {
		t.Fatalf("identification %+v, want Ireland's from 2026-02-01, saying so", ret.ID)
	}
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sec, note := slices.Index(returns.CSVHeader, "section"), slices.Index(returns.CSVHeader, "note")
	found := false
	for _, row := range rows[1:] {
		if row[sec] == returns.SectionReview && strings.Contains(row[note], ret.ID.Missing) {
			found = true
		}
	}
	if !found {
		t.Errorf("no review row of the CSV says %q:\n%s", ret.ID.Missing, buf.String())
	}
}

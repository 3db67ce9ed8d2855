package wire

import (
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// vatConditions lists the rate conditions the rate table knows.
func vatConditions() []string {
	var out []string
	for _, c := range vat.Rates().Conditions() {
		out = append(out, c.Code)
	}
	return out
}

func TestFieldChecks(t *testing.T) {
	now := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	check := func(name string, err error, field string) {
		t.Helper()
		var fe *FieldError
		switch {
		case field == "" && err != nil:
			t.Errorf("%s: unexpected error %v", name, err)
		case field != "" && !errors.As(err, &fe):
			t.Errorf("%s: got %v, want a FieldError on %s", name, err, field)
		case field != "" && fe.Field != field:
			t.Errorf("%s: error names %q, want %q", name, fe.Field, field)
		}
	}
	d, canon, err := USDCAmount("/a", "0.0510000")
	check("trailing zeros", err, "")
	if canon != "0.051000" || d.String() != "0.051" {
		t.Errorf("0.0510000 read as %s (%s)", d, canon)
	}
	for _, bad := range []string{"", "-1", "01", "1e3", "0", "0.0000001", "1234567890123"} {
		_, _, err := USDCAmount("/a", bad)
		check("amount "+bad, err, "/a")
	}
	_, err = Timestamp("/t", "2026-04-10T12:04:00Z", now)
	check("within skew", err, "")
	// RFC 3339 section 5.6: time-secfrac = "." 1*DIGIT; a comma is not
	// one, and a digit past the ninth cannot be kept, so it is refused
	// rather than dropped.
	for _, good := range []string{"2026-04-10T11:59:59.5Z", "2026-04-10T11:59:59.123456789Z", "2026-04-10T11:59:59.1+00:00"} {
		_, err := Timestamp("/t", good, now)
		check("timestamp "+good, err, "")
	}
	for _, bad := range []string{"2026-04-10T12:06:00Z", "2014-12-31T00:00:00Z", "2026-04-10T12:00:00+02:00",
		"2026-04-10T11:59:59,5Z", "2026-04-10T11:59:59.1234567891Z", "2026-04-10T11:59:59.Z", "2026-04-10T11:59:59,123+00:00"} {
		_, err := Timestamp("/t", bad, now)
		check("timestamp "+bad, err, "/t")
	}
	if a, err := Address("/w", "0xABCDEFabcdef0123456789012345678901234567"); err != nil || a != "0xabcdefabcdef0123456789012345678901234567" {
		t.Errorf("address: %q %v", a, err)
	}
	for in, want := range map[string]string{"de": "DE", "EL": "EL", "xi": "XI"} {
		if c, err := Country("/c", in); err != nil || c != want {
			t.Errorf("Country(%q) = %q, %v", in, c, err)
		}
	}
	_, err = Country("/c", "UK")
	check("UK is not ISO", err, "/c")
	if c, err := BuyerCountry("/c", "uk"); err != nil || c != "UK" {
		t.Errorf("BuyerCountry(uk) = %q, %v", c, err)
	}
	_, err = Text("/n", "a\x01b")
	check("control character", err, "/n")
	check("idempotency key", IdempotencyKey("has space"), "Idempotency-Key")
	check("no idempotency key", IdempotencyKey(""), "")
}

// TestBuyerFieldChecks: postal codes, VAT numbers and rate conditions as a
// buyer states them (shared by POST /settlements and fiscal events).
func TestBuyerFieldChecks(t *testing.T) {
	if pc, err := PostalCode("/p", "  D02 X285 "); err != nil || pc != "D02 X285" {
		t.Errorf("PostalCode trims: %q %v", pc, err)
	}
	for _, bad := range []string{"12345678901234567", "75\x0001", "75\x7f01", "\xff\xfe"} {
		var fe *FieldError
		if _, err := PostalCode("/p", bad); !errors.As(err, &fe) || fe.Field != "/p" {
			t.Errorf("PostalCode(%q) = %v, want an error on /p", bad, err)
		}
	}
	if n, err := VATNumber("/v", " DE123456789 "); err != nil || n != "DE123456789" {
		t.Errorf("VATNumber trims: %q %v", n, err)
	}
	var fe *FieldError
	if _, err := VATNumber("/v", "DE"+string(make([]byte, 31))); !errors.As(err, &fe) || fe.Field != "/v" {
		t.Errorf("a 33-byte VAT number with controls: %v", err)
	}
	// Two known codes, repeated and out of order, come back sorted once.
	codes := vatConditions()
	if len(codes) < 2 {
		t.Fatalf("the rate table knows %d rate conditions; this test needs two", len(codes))
	}
	got, err := RateConditions("/rc", []string{codes[1], codes[0], codes[1]})
	if err != nil || len(got) != 2 || got[0] > got[1] {
		t.Errorf("RateConditions = %v, %v", got, err)
	}
	if _, err := RateConditions("/rc", []string{codes[0], "no_such_condition"}); !errors.As(err, &fe) || fe.Field != "/rc/1" {
		t.Errorf("an unknown condition: %v, want an error on /rc/1", err)
	}
	if got, err := RateConditions("/rc", nil); got != nil || err != nil {
		t.Errorf("no conditions: %v %v", got, err)
	}
}

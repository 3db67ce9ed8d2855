package fx

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"time"
)

func TestNationalCurrencyFor(t *testing.T) {
	for _, tc := range []struct {
		country, at string
		currency    string // "" for none
		err         error
	}{
		{"PL", "2026-04-14T10:00:00Z", "PLN", nil},
		{"CZ", "2026-04-14T10:00:00Z", "CZK", nil},
		{"DK", "2026-04-14T10:00:00Z", "DKK", nil},
		{"HU", "2026-04-14T10:00:00Z", "HUF", nil},
		{"RO", "2026-04-14T10:00:00Z", "RON", nil},
		{"SE", "2026-04-14T10:00:00Z", "SEK", nil},
		{"GB", "2026-04-14T10:00:00Z", "GBP", nil},
		{"UK", "2026-04-14T10:00:00Z", "GBP", nil},
		{"DE", "2026-04-14T10:00:00Z", "", nil},
		{"EL", "2026-04-14T10:00:00Z", "", nil},
		{"HR", "2023-01-01T00:00:00+01:00", "", nil},
		// Bulgaria: the lev until 31 December 2025 in Sofia (EET, UTC+2),
		// the euro from 1 January 2026 (Council Decision (EU) 2025/1407).
		{"BG", "2025-12-31T21:59:59Z", "BGN", nil}, // 23:59:59 in Sofia
		{"BG", "2025-12-31T22:00:00Z", "", nil},    // 00:00 on 1 January in Sofia
		{"BG", "2025-06-30T12:00:00Z", "BGN", nil},
		{"BG", "2026-04-14T10:00:00Z", "", nil},
		{"US", "2026-04-14T10:00:00Z", "", ErrNoNationalRule},
		{"", "2026-04-14T10:00:00Z", "", ErrNoNationalRule},
		{"PL", "2022-12-31T12:00:00Z", "", ErrNoNationalRule},
	} {
		nc, ok, err := NationalCurrencyFor(tc.country, instant(t, tc.at))
		if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%s at %s: err = %v, want %v", tc.country, tc.at, err, tc.err)
			continue
		}
		if ok != (tc.currency != "") || nc.Currency != tc.currency {
			t.Errorf("%s at %s: %q ok=%v, want %q", tc.country, tc.at, nc.Currency, ok, tc.currency)
		}
		if ok && (nc.Rule.Law == "" || nc.Basis == "" || nc.Rule.ID == "" || nc.Rule.NationalRate == "") {
			t.Errorf("%s: rule without its law: %+v", tc.country, nc)
		}
	}
	gb, _, _ := NationalCurrencyFor("GB", time.Now())
	if gb.Rule.ECB != ECBNotAccepted {
		t.Errorf("GB accepts the ECB rate? %+v", gb.Rule)
	}
	for _, c := range []string{"CZ", "DK", "HU", "PL", "RO", "SE", "BG"} {
		nc, _, _ := NationalCurrencyFor(c, instant(t, "2025-06-30T12:00:00Z"))
		if nc.Rule.ECB != ECBAllowed {
			t.Errorf("%s: ECB = %q", c, nc.Rule.ECB)
		}
	}
}

// synthLive is the embedded table extended with a SYNTHETIC multi-currency
// feed for the given business days.
func synthLive(t *testing.T, first, last string) *Table {
	t.Helper()
	tb, err := embedded(t).Merge(xmlTable(t, "fetch:synthetic", synthFeed(businessDays(first, last), nil)))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// wantNational computes the expected figure with math/big, independently of
// decimal: amount × rate, rounded half away from zero to 2 places.
func wantNational(amount, raw string) string {
	p := new(big.Rat).Mul(ratOf(dec(amount)), ratOf(dec(raw)))
	return roundRat(p, 2).FloatString(2)
}

func TestConvertEURToNational(t *testing.T) {
	tb := synthLive(t, "2025-12-01", "2026-04-16")
	ctx := context.Background()
	vat := "13.665171648940"
	for _, tc := range []struct {
		name, country, at string
		p                 Policy
		rateDate          string
	}{
		// Poland, art. 31a: the ECB rate for the day before the tax point,
		// whatever the Art. 91 policy.
		{"PL Tuesday", "PL", "2026-04-14T10:00:00Z", LatestPublishedAt, "2026-04-13"},
		{"PL Tuesday, rate of the day", "PL", "2026-04-14T18:00:00Z", ForDayOrPrevious, "2026-04-13"},
		{"PL Monday takes Friday's", "PL", "2026-04-13T10:00:00Z", LatestPublishedAt, "2026-04-10"},
		{"PL 00:30 Warsaw is the next day", "PL", "2026-04-14T22:30:00Z", LatestPublishedAt, "2026-04-14"},
		// Others: the latest ECB rate at the chargeable event under the policy.
		{"CZ 08:00 CEST", "CZ", "2026-04-14T08:00:00+02:00", LatestPublishedAt, "2026-04-13"},
		{"CZ 17:00 CEST", "CZ", "2026-04-14T17:00:00+02:00", LatestPublishedAt, "2026-04-14"},
		{"CZ 08:00, rate of the day", "CZ", "2026-04-14T08:00:00+02:00", ForDayOrPrevious, "2026-04-14"},
		{"SE", "SE", "2026-04-15T12:00:00Z", ForDayOrPrevious, "2026-04-15"},
		{"HU", "HU", "2026-04-15T12:00:00Z", ForDayOrPrevious, "2026-04-15"},
		{"RO", "RO", "2026-04-15T12:00:00Z", ForDayOrPrevious, "2026-04-15"},
		{"DK", "DK", "2026-04-15T12:00:00Z", ForDayOrPrevious, "2026-04-15"},
		{"BG in 2025", "BG", "2025-12-31T10:00:00Z", ForDayOrPrevious, "2025-12-31"},
		// An OSS return converts at the period end, for Poland too.
		{"PL return, quarter ending Tuesday", "PL", "2026-03-31T12:00:00Z", PeriodEndOrNext, "2026-03-31"},
		{"CZ return, period ending Saturday", "CZ", "2026-04-11T12:00:00Z", PeriodEndOrNext, "2026-04-13"},
	} {
		at := instant(t, tc.at)
		nc, ok, err := NationalCurrencyFor(tc.country, at)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", tc.name, ok, err)
		}
		n, err := ConvertEURToNational(ctx, tb, dec(vat), nc, at, tc.p)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		raw := synthRate(nc.Currency, tc.rateDate)
		if n.Rate.RateDate != tc.rateDate || n.Rate.Raw != raw || n.Rate.Quote != nc.Currency || n.Rate.Base != "EUR" {
			t.Errorf("%s: rate %+v, want %s %s", tc.name, n.Rate, tc.rateDate, raw)
		}
		if want := wantNational(vat, raw); n.AmountStr != want {
			t.Errorf("%s: %s %s, want %s", tc.name, n.AmountStr, n.Currency, want)
		}
		if n.Rule.ID != nc.Rule.ID || n.Rate.Source != "ECB:EXR.D."+nc.Currency+".EUR.SP00.A" || n.AmountEUR != canonicalDecimal(dec(vat)) {
			t.Errorf("%s: provenance %+v", tc.name, n)
		}
		if err := n.Check(); err != nil {
			t.Errorf("%s: Check: %v", tc.name, err)
		}
	}
}

func TestConvertEURToNationalErrors(t *testing.T) {
	ctx := context.Background()
	at := instant(t, "2026-04-14T12:00:00Z")
	pl, _, _ := NationalCurrencyFor("PL", at)
	gb, _, _ := NationalCurrencyFor("GB", at)
	cz, _, _ := NationalCurrencyFor("CZ", at)
	// GB does not accept the ECB rate: review, whatever the table holds.
	if _, err := ConvertEURToNational(ctx, synthLive(t, "2026-04-01", "2026-04-16"), dec("1"), gb, at, LatestPublishedAt); !errors.Is(err, ErrNationalRateRequired) {
		t.Errorf("GB: %v", err)
	}
	// The embedded data has no PLN: unavailable, never another rate.
	_, err := ConvertEURToNational(ctx, embedded(t), dec("1"), pl, instant(t, "2026-04-13T12:00:00Z"), ForDayOrPrevious)
	if !errors.Is(err, ErrNationalRateUnavailable) || !errors.Is(err, ErrNoRate) {
		t.Errorf("PLN from USD-only data: %v", err)
	}
	// A day whose publication the table lacks is pending, not unavailable.
	_, err = ConvertEURToNational(ctx, synthLive(t, "2026-04-01", "2026-04-14"), dec("1"), cz, instant(t, "2026-04-15T17:00:00Z"), LatestPublishedAt)
	if !errors.Is(err, ErrNotYetPublished) || errors.Is(err, ErrNationalRateUnavailable) {
		t.Errorf("not yet published: %v", err)
	}
	if _, err := ConvertEURToNational(ctx, embedded(t), dec("1"), cz, at, "spot"); !errors.Is(err, ErrPolicy) {
		t.Errorf("bad policy: %v", err)
	}
	if _, err := ConvertEURToNational(ctx, embedded(t), dec("1"), NationalCurrency{}, at, ForDayOrPrevious); !errors.Is(err, ErrNoNationalRule) {
		t.Errorf("zero NationalCurrency: %v", err)
	}
}

func TestNationalConversionWireFormat(t *testing.T) {
	tb := synthLive(t, "2026-04-01", "2026-04-16")
	at := instant(t, "2026-04-14T10:00:00Z")
	pl, _, _ := NationalCurrencyFor("PL", at)
	n, err := ConvertEURToNational(context.Background(), tb, dec("13.665171648940"), pl, at, LatestPublishedAt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "national.golden.json", append(b, '\n'))
	var back NationalConversion
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Check(); err != nil {
		t.Errorf("decoded: %v", err)
	}
	for name, mutate := range map[string]func(*NationalConversion){
		"amount":   func(n *NationalConversion) { n.AmountStr = "58.26" },
		"exact":    func(n *NationalConversion) { n.AmountExact = "58" },
		"raw":      func(n *NationalConversion) { n.Rate.Raw = "4.2" },
		"currency": func(n *NationalConversion) { n.Currency = "CZK" },
		"eur":      func(n *NationalConversion) { n.AmountEUR = "13.66" },
		"scale":    func(n *NationalConversion) { n.Scale = 0 },
	} {
		m := back
		mutate(&m)
		if err := m.Check(); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: Check = %v", name, err)
		}
	}
}

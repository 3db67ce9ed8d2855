package fiscal_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRateOfTheDayIsTheLocalDay: under the "rate of the day" account option
// (fx.ForDayOrPrevious, Art. 91(2) third subparagraph Directive
// 2006/112/EC: the rate of the day the tax becomes chargeable) the day is
// the calendar day of the supply in the taxing state, the day the record
// dates the supply by (classification.supplyDate, timeZone), not the UTC
// date of the payment: a sale at 23:30 UTC to a consumer in Finland or
// Greece is already the next day there. The publications expected are read
// from the embedded ECB table and the zone's own clock.
func TestRateOfTheDayIsTheLocalDay(t *testing.T) {
	ofDay := usOSSSeller(t)
	ofDay.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), ofDay))
	b := fiscaltest.Books(t, e, 0)
	emb, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ country, zone, at string }{
		{"FI", "Europe/Helsinki", "2026-04-09T23:30:00Z"},
		{"GR", "Europe/Athens", "2026-04-09T21:30:00Z"},
		{"DE", "Europe/Berlin", "2026-04-09T21:30:00Z"}, // 23:30 in Berlin: still the UTC day
	} {
		at, _ := time.Parse(time.RFC3339, c.at)
		local, ok := vat.LocalDate(c.zone, at)
		if !ok {
			t.Fatalf("zone %s not embedded", c.zone)
		}
		day, _ := time.Parse(time.DateOnly, local)
		want, err := emb.Lookup("USD", day.Add(12*time.Hour), fx.ForDayOrPrevious)
		if err != nil {
			t.Fatal(err)
		}
		r := settleOK(t, b, fiscaltest.Request(7100+i, "100", c.country, c.at))
		rt := r.FX.USDPerEUR
		if rt == nil {
			t.Fatalf("%s %s: no rate: %v", c.country, c.at, reasons(r))
		}
		if r.Classification.SupplyDate != local || r.Classification.TimeZone != c.zone {
			t.Fatalf("%s %s: supply date %s %s, want %s %s", c.country, c.at, r.Classification.SupplyDate, r.Classification.TimeZone, local, c.zone)
		}
		if rt.RateDate != want.RateDate || rt.Requested != local || rt.Policy != fx.ForDayOrPrevious {
			t.Errorf("%s %s (supply date %s in %s): publication %s requested %s under %s, want %s requested %s",
				c.country, c.at, local, c.zone, rt.RateDate, rt.Requested, rt.Policy, want.RateDate, local)
		}
	}
}

// TestNationalRateOfTheDayIsTheLocalDay: the VAT an invoice states in the
// taxing state's currency (Art. 230 Directive 2006/112/EC, "using the
// conversion mechanism provided for in Article 91"; EN 16931 BT-6/BT-111)
// is converted on the same day as the EUR amount: under the "rate of the
// day" (Art. 91(2) third subparagraph,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// the supply's calendar day in the taxing state. A domestic sale in
// Romania at 21:30 UTC and one in Sweden at 22:30 UTC on 9 April 2026 are
// on 10 April in Bucharest and Stockholm; the national rate must be the
// 10 April publication, as the USD rate is, not the 9 April one (the
// payment's UTC date). Rates: the SYNTHETIC feed of internal/fiscaltest,
// whose values differ from day to day.
func TestNationalRateOfTheDayIsTheLocalDay(t *testing.T) {
	for i, c := range []struct{ seller, country, currency, zone, at string }{
		{"ro-full", "RO", "RON", "Europe/Bucharest", "2026-04-09T21:30:00Z"},
		{"se-full", "SE", "SEK", "Europe/Stockholm", "2026-04-09T22:30:00Z"},
	} {
		seller := fiscaltest.LawSellerOf(t, c.seller)
		seller.FXPolicy = fx.ForDayOrPrevious
		cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller)
		cfg.FX = fiscaltest.SyntheticFX(t)
		b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
		at, _ := time.Parse(time.RFC3339, c.at)
		local, ok := vat.LocalDate(c.zone, at)
		if !ok {
			t.Fatalf("zone %s not embedded", c.zone)
		}
		utc := at.Format(time.DateOnly)
		if fiscaltest.SyntheticRate(c.currency, local).Equal(fiscaltest.SyntheticRate(c.currency, utc)) {
			t.Fatalf("%s: the rates of %s and %s do not differ: the case shows nothing", c.currency, local, utc)
		}
		r := settleOK(t, b, fiscaltest.Request(7200+i, "100", c.country, c.at))
		n := r.FX.National
		if r.ReviewStatus != fiscal.StatusProcessed || n == nil || n.Rate == nil || r.FX.USDPerEUR == nil {
			t.Fatalf("%s %s: %s %v, no national figures", c.country, c.at, r.ReviewStatus, reasons(r))
		}
		if r.Classification.SupplyDate != local || r.FX.USDPerEUR.RateDate != local {
			t.Fatalf("%s %s: supply date %s, USD rate of %s, want %s", c.country, c.at, r.Classification.SupplyDate, r.FX.USDPerEUR.RateDate, local)
		}
		if n.Currency != c.currency || n.Rate.RateDate != local || n.Rate.Requested != local || !n.Rate.Value.Equal(fiscaltest.SyntheticRate(c.currency, local)) {
			t.Errorf("%s %s (supply date %s in %s): %s rate %s of %s requested %s, want the publication of %s (%s), as the USD rate",
				c.country, c.at, local, c.zone, n.Currency, n.Rate.Raw, n.Rate.RateDate, n.Rate.Requested, local, fiscaltest.SyntheticRate(c.currency, local))
		}
	}
}

// TestRateOfTheDayThatMovesTheDayIsReviewed: under the "rate of the day"
// the rate is the one of the supply's calendar day in the taxing state
// (Art. 91(2) third subparagraph Directive 2006/112/EC), but which state
// taxes a seller near the EUR 10,000 threshold depends on the supply's
// value in euro (Art. 59c(1)(c), https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112),
// so on the rate. An Irish seller's sale at 23:30 UTC on 26 January 2026
// (winter: still 26 January in Dublin, 27 January in Helsinki) to a Finnish
// consumer: on the 26 January rate it crosses the threshold and is taxed in
// Finland, dated 27 January; on the 27 January rate (a dearer euro) it
// stays under and is taxed in Ireland, dated 26 January. No day's rate
// agrees with the day it gives, the law does not say which wins, and the
// engine must not record either as settled: every record is either dated
// on the day of its rate or pending review. The opening totals sweep the
// threshold so that some sales fall in between.
func TestRateOfTheDayThatMovesTheDayIsReviewed(t *testing.T) {
	const at = "2026-01-26T23:30:00Z"
	inDoubt := 0
	for total := 9290; total <= 9340; total++ {
		s := fiscaltest.IrishSeller
		s.OverThreshold, s.FXPolicy = false, fx.ForDayOrPrevious
		s.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: strconv.Itoa(total)}}
		b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 1, 30, 12, 0, 0, 0, time.UTC), s)), 0)
		r := settleOK(t, b, fiscaltest.Request(7300, "1000", "FI", at))
		if slices.Contains(reasons(r), fiscal.ReasonFXRateDayInDoubt) {
			if r.ReviewStatus != fiscal.StatusPendingReview {
				t.Errorf("opening %d: %s with %v", total, r.ReviewStatus, reasons(r))
			}
			inDoubt++
			continue
		}
		if rt := r.FX.USDPerEUR; rt == nil || rt.Requested != r.Classification.SupplyDate {
			t.Errorf("opening %d: %s, taxed in %s on %s (%s) at the rate requested for %v", total, r.ReviewStatus,
				r.Classification.TaxingCountry, r.Classification.SupplyDate, r.Classification.TimeZone, rt)
		}
	}
	if inDoubt == 0 {
		t.Error("no opening total put the sale between the two rates: the case shows nothing")
	}
}

// TestRateUnavailableNamesTheLocalDay: under the "rate of the day"
// (fx.ForDayOrPrevious; Art. 91(2) third subparagraph Directive
// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// a record waiting for its rate waits for the publication of the supply's
// calendar day in the taxing state. A sale at 23:30 UTC on the last day of
// the embedded ECB table to a Finnish consumer is dated the next day in
// Helsinki, whose rate is not out: the fx_rate_unavailable reason must
// name that day, not the payment instant (whose UTC date has a rate).
func TestRateUnavailableNamesTheLocalDay(t *testing.T) {
	emb, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	_, last := emb.Range()
	lastDay, _ := time.Parse(time.DateOnly, last)
	at := lastDay.Add(23*time.Hour + 30*time.Minute)
	local, ok := vat.LocalDate("Europe/Helsinki", at)
	if !ok || local == last {
		t.Fatalf("the Helsinki day of %s is %q: the case shows nothing", at, local)
	}
	ofDay := usOSSSeller(t)
	ofDay.FXPolicy = fx.ForDayOrPrevious
	b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, at.Add(6*time.Hour), ofDay)), 0)
	r := settleOK(t, b, fiscaltest.Request(7400, "100", "FI", at.Format(time.RFC3339)))
	if r.Classification.SupplyDate != local {
		t.Fatalf("supply date %s, want %s", r.Classification.SupplyDate, local)
	}
	var detail string
	for _, rs := range r.ReviewReasons {
		if rs.Code == fiscal.ReasonFXRateUnavailable {
			detail = rs.Detail
		}
	}
	if detail == "" {
		t.Fatalf("%s %v: no %s", r.ReviewStatus, reasons(r), fiscal.ReasonFXRateUnavailable)
	}
	if !strings.Contains(detail, local) || strings.Contains(detail, at.Format(time.RFC3339)) {
		t.Errorf("the reason names %q; want the day waited for, %s, not the payment instant %s", detail, local, at.Format(time.RFC3339))
	}
}

// TestNationalCurrencyOnTheSupplyDate: whether the VAT must also be stated
// in a national currency (Art. 230 Directive 2006/112/EC) is decided on
// the day the engine dates the supply by (classification.supplyDate, the
// calendar day in the taxing state), as its rate, its registrations and
// its rate of the day are, not on the invoicing state's own day of the
// payment instant. Bulgaria adopted the euro on 1 January 2026 (Council
// Decision (EU) 2025/1407, https://eur-lex.europa.eu/eli/dec/2025/1407/oj):
// a Bulgarian OSS seller's sale at 22:30 UTC on 31 December 2025 to a
// French consumer is dated 31 December (23:30 in Paris, already 1 January
// in Sofia), a supply before the euro, so its VAT is stated in leva too,
// as for any Bulgarian supply of 2025 (which then waits for review on
// BR-CL-05, TestBulgariaLevThenEuro). Rates: the SYNTHETIC feed of internal/fiscaltest, which
// publishes BGN until 2025-12-31.
func TestNationalCurrencyOnTheSupplyDate(t *testing.T) {
	seller := fiscaltest.LawSellerOf(t, "bg-full")
	const at = "2025-12-31T22:30:00Z"
	ts, _ := time.Parse(time.RFC3339, at)
	paris, _ := vat.LocalDate("Europe/Paris", ts)
	sofia, _ := vat.LocalDate("Europe/Sofia", ts)
	if paris != "2025-12-31" || sofia != "2026-01-01" {
		t.Fatalf("Paris %s, Sofia %s: the case shows nothing", paris, sofia)
	}
	for _, policy := range []fx.Policy{fx.LatestPublishedAt, fx.ForDayOrPrevious} {
		seller.FXPolicy = policy
		cfg := fiscaltest.Config(t, time.Date(2026, 1, 5, 18, 0, 0, 0, time.UTC), seller)
		cfg.FX = fiscaltest.SyntheticFX(t)
		b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
		r := settleOK(t, b, fiscaltest.Request(7500, "100", "FR", at))
		if r.Classification.SupplyDate != paris || r.Classification.Regime != vat.RegimeOSSB2C {
			t.Fatalf("%s: %s dated %s", policy, r.Classification.Regime, r.Classification.SupplyDate)
		}
		if n := r.FX.National; n == nil || n.Currency != "BGN" {
			t.Errorf("%s: a supply dated %s by a Bulgarian OSS seller has national figures %+v, want BGN (the euro replaced the lev only on 2026-01-01)", policy, paris, n)
		}
	}
}

package fiscal_test

import (
	"testing"
	"time"

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

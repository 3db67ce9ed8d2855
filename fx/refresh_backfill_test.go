package fx

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestRefresherBackfillsCurrenciesOfThePreviousPublication: a table whose
// newest publications hold USD only (the embedded series, an operator's
// two-column file) needs the daily feed alone when it is one publication
// behind, and the daily feed brings every other currency for its own day
// only. The publication before it keeps USD alone, and no later daily feed
// carries it again: a payment made before that day's 16:00 (the latest
// publication then is the day before's, Art. 91(2) Directive 2006/112/EC)
// and a Polish supply of that day (the ECB rate of the last day before it,
// art. 31a ust. 2 ustawy o VAT) then wait for their national rate for ever.
// The refresher must fetch what fills them.
func TestRefresherBackfillsCurrenciesOfThePreviousPublication(t *testing.T) {
	ctx := context.Background()
	ecb := newFakeECB(t, businessDays("2026-01-02", "2026-04-14")...)
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	g := newRigOn(t, embedded(t), ecb, clock, &MemoryStore{})
	tomorrow := instant(t, "2026-04-15T16:10:00+02:00")
	for i := 0; i < 5; i++ {
		next, err := g.r.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !next.Before(tomorrow) {
			break
		}
		clock.set(next)
	}
	morning := instant(t, "2026-04-14T10:00:00+02:00")
	for _, cur := range []string{"SEK", "PLN", "HUF"} {
		r, err := g.live.Rate(ctx, cur, morning, LatestPublishedAt)
		if err != nil || r.RateDate != "2026-04-13" || r.Raw != synthRate(cur, "2026-04-13") {
			t.Errorf("%s at %s: %+v, %v; want the publication of 2026-04-13", cur, morning.Format(time.RFC3339), r, err)
		}
	}
	if p := ecb.paths(); !slices.Equal(p, []string{"/daily.xml", "/hist-90d.xml"}) {
		t.Errorf("requests %v, want the daily feed, then the 90-day feed once", p)
	}
	// The next publication is the daily feed's again.
	ecb.publish("2026-04-15")
	clock.set(tomorrow)
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if p := ecb.paths(); !slices.Equal(p, []string{"/daily.xml", "/hist-90d.xml", "/daily.xml"}) {
		t.Errorf("requests %v, want the daily feed for 2026-04-15", p)
	}
	nc, _, err := NationalCurrencyFor("PL", morning)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertEURToNational(ctx, g.live, dec("10"), nc, morning, LatestPublishedAt); err != nil {
		t.Errorf("PLN for a Polish supply of 2026-04-14: %v", err)
	}
}

// TestRefresherBackfillSurvivesRestart: the daily feed was merged and the
// 90-day feed that fills the publication before it failed; a restart
// restores the daily document from the Store and must still fetch the
// 90-day feed, though no publication is missing by then.
func TestRefresherBackfillSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	store := &MemoryStore{}
	ecb := newFakeECB(t, businessDays("2026-01-02", "2026-04-14")...)
	ecb.set(func(f *fakeECB) { f.gone = map[string]bool{"/hist-90d.xml": true} })
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	first := newRigOn(t, embedded(t), ecb, clock, store)
	if _, err := first.r.RunOnce(ctx); err == nil {
		t.Fatal("the 90-day feed is gone, and the attempt succeeded")
	}
	morning := instant(t, "2026-04-14T10:00:00+02:00")
	if _, err := first.live.Rate(ctx, "SEK", morning, LatestPublishedAt); err == nil {
		t.Fatal("SEK of 2026-04-13 without the 90-day feed")
	}

	ecb.set(func(f *fakeECB) { f.gone = nil })
	clock.set(instant(t, "2026-04-14T17:00:00+02:00"))
	second := newRigOn(t, embedded(t), ecb, clock, store)
	if err := second.r.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := second.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := second.live.Rate(ctx, "SEK", morning, LatestPublishedAt)
	if err != nil || r.RateDate != "2026-04-13" {
		t.Errorf("SEK at %s after the restart: %+v, %v", morning, r, err)
	}
}

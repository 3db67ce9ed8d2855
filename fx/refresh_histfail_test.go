package fx

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestRefresherHistoryFailureStillBringsRecentRates: a table months behind
// asks the full history; while that feed fails (down, too large for a
// proxy, absent from a mirror), the 90-day feed still has every recent
// publication. Retrying the history alone left the table months stale and
// every payment waiting for a rate (fx_rate_unavailable) for as long as the
// history failed, though the rates of the last ~64 publications were to be
// had.
func TestRefresherHistoryFailureStillBringsRecentRates(t *testing.T) {
	ctx := context.Background()
	ecb := newFakeECB(t, businessDays("2025-06-02", "2026-09-01")...)
	ecb.set(func(f *fakeECB) { f.gone = map[string]bool{"/hist.xml": true} })
	clock := newFakeClock(t, "2026-09-01T18:00:00Z")
	g := newRig(t, ecb, clock, &MemoryStore{})

	next, err := g.r.RunOnce(ctx)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Errorf("err = %v, want the history's 404", err)
	}
	for _, d := range []string{"2026-06-15", "2026-09-01"} {
		if _, err := g.live.Rate(ctx, "USD", instant(t, d+"T12:00:00Z"), ForDayOrPrevious); err != nil {
			t.Errorf("USD of %s while the history fails: %v", d, err)
		}
	}
	if p := ecb.paths(); !slices.Contains(p, "/hist.xml") {
		t.Errorf("requests %v: the history was not asked", p)
	}
	// The history is still wanted: asked again at the retry.
	ecb.set(func(f *fakeECB) { f.gone = nil })
	clock.set(next)
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if p := ecb.paths(); p[len(p)-1] != "/hist.xml" {
		t.Errorf("requests %v: the history was not asked again", p)
	}
	if cov := g.live.Table().Coverage(); len(cov) != 1 {
		t.Errorf("coverage %v after the history", cov)
	}
}

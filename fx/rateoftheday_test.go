package fx

import (
	"testing"
	"time"
)

// TestRateOfTheDay: the "rate of the day" is looked up on the supply's
// local day when it is not the UTC date; LatestPublishedAt, an unknown or
// empty day and the same day keep the instant.
func TestRateOfTheDay(t *testing.T) {
	at := time.Date(2026, 4, 9, 23, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		p     Policy
		date  string
		other bool
	}{
		{ForDayOrPrevious, "2026-04-10", true},
		{"", "2026-04-10", true},
		{ForDayOrPrevious, "2026-04-09", false},
		{ForDayOrPrevious, "", false},
		{ForDayOrPrevious, "10/04/2026", false},
		{LatestPublishedAt, "2026-04-10", false},
	} {
		got, other := RateOfTheDay(c.p, at, c.date)
		if other != c.other {
			t.Errorf("%q %q: other %v, want %v", c.p, c.date, other, c.other)
			continue
		}
		if !other && !got.Equal(at) {
			t.Errorf("%q %q: %s, want the instant itself", c.p, c.date, got)
		}
		if other && got.UTC().Format(time.DateOnly) != c.date {
			t.Errorf("%q %q: %s is not on the supply's day", c.p, c.date, got)
		}
	}
	// Looked up at that instant, the table answers the local day's publication.
	tb, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	in, _ := RateOfTheDay(ForDayOrPrevious, at, "2026-04-10")
	if r, err := tb.Lookup("USD", in, ForDayOrPrevious); err != nil || r.RateDate != "2026-04-10" || r.Requested != "2026-04-10" {
		t.Errorf("lookup on the local day: %+v %v", r, err)
	}
}

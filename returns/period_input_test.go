package returns_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
)

// TestPeriodOutOfRangeIsBadRequest: a Go caller builds a Period by hand
// (ParsePeriod is for text); one that is no calendar quarter (the zero
// Period, quarter 0 or 5) is BAD_REQUEST on "period", not an INTERNAL
// error from the rate lookup, nor a return or records of another quarter
// under its name, nor an empty success.
func TestPeriodOutOfRangeIsBadRequest(t *testing.T) {
	ctx := context.Background()
	b := newBooks(t, time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC))
	settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-04-10T14:30:00Z"})
	bad := func(what string, err error) {
		t.Helper()
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "period" {
			t.Errorf("%s: %v; want BAD_REQUEST on period", what, err)
		}
	}
	for _, p := range []returns.Period{{}, {Year: 2026}, {Year: 2026, Quarter: 5}, {Year: 2026, Quarter: -1}, {Year: 1999, Quarter: 2}} {
		r, _, err := returns.OSS(ctx, b, p, returns.Options{})
		bad("OSS "+p.String(), err)
		if r != nil {
			t.Errorf("OSS %+v returned a return for %s", p, r.Period)
		}
		n := 0
		err = returns.Records(ctx, b, returns.RecordsQuery{Period: p, MemberState: "DE"}, func(returns.RecordRow) error { n++; return nil })
		bad("Records "+p.String(), err)
		if n != 0 {
			t.Errorf("Records %+v listed %d rows", p, n)
		}
	}
	if _, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{}); err != nil {
		t.Fatalf("OSS 2026-Q2: %v", err)
	}
}

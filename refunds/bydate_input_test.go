package refunds_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestByDateRefusesMalformedDays: ByDate's bounds are YYYY-MM-DD days
// compared with the index keys as text, so a bound in another form
// ("2026-4-1") silently selected the wrong refunds (here: none of April's).
// A malformed bound is now BAD_REQUEST naming it, and fn is never called.
func TestByDateRefusesMalformedDays(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	b := fiscaltest.Books(t, e, 0)
	rec := settleOK(t, b, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"))
	if _, err := refunds.Create(ctx, b, rec.ID, refunds.Request{AmountUSDC: "5.00"}, ""); err != nil {
		t.Fatal(err)
	}
	count := func(from, to string) (int, error) {
		n := 0
		err := refunds.ByDate(ctx, b, from, to, func(*refunds.Refund, []byte) error { n++; return nil })
		return n, err
	}
	if n, err := count("2026-04-01", "2026-04-30"); err != nil || n != 1 {
		t.Fatalf("ByDate(2026-04-01, 2026-04-30) = %d refunds, %v; want 1, nil", n, err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"2026-4-1", "2026-04-30", "from"},
		{"2026-04-01", "2026-4-30", "to"},
		{"2026-13-01", "", "from"},
		{"", "April", "to"},
	} {
		n, err := count(c.from, c.to)
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != c.field || n != 0 {
			t.Errorf("ByDate(%q, %q) = %d refunds, %v; want none and BAD_REQUEST on %q", c.from, c.to, n, err, c.field)
		}
	}
}

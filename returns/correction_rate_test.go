package returns_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
)

// periodEndFailing is the embedded ECB table, except that, once failing
// is set, the period-end rate of day answers err.
type periodEndFailing struct {
	fx.Source
	day     string
	err     error
	failing atomic.Bool
}

func (s *periodEndFailing) Rate(ctx context.Context, quote string, at time.Time, p fx.Policy) (fx.Rate, error) {
	if s.failing.Load() && p == fx.PeriodEndOrNext && at.UTC().Format(time.DateOnly) == s.day {
		return fx.Rate{}, s.err
	}
	return s.Source.Rate(ctx, quote, at, p)
}

// correctionRateReturn asks for the return of Q1 2026 of a seller with a
// French sale of Q1 and a German sale of Q4 2025 refunded in Q1 (a
// correction of 2025-Q4), while the period-end rate of 2025-12-31 answers
// err.
func correctionRateReturn(t *testing.T, err error) (*returns.Return, error) {
	t.Helper()
	src, e0 := fx.Embedded()
	if e0 != nil {
		t.Fatal(e0)
	}
	fs := &periodEndFailing{Source: src, day: "2025-12-31", err: err}
	var clock atomic.Pointer[time.Time]
	set := func(at time.Time) { clock.Store(&at) }
	set(time.Date(2025, 11, 10, 12, 0, 0, 0, time.UTC))
	cfg := fiscaltest.Config(t, testNow, ossSeller())
	cfg.FX, cfg.NoBackground = fs, true
	cfg.Clock = func() time.Time { return *clock.Load() }
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	de := settle(t, b, 1, sale{amount: "119.00", country: "DE", at: "2025-11-10T10:00:00Z"})[0]
	set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	refund(t, b, de.ID, "50.00", "r-de")
	settle(t, b, 2, sale{amount: "24.40", country: "FR", at: "2026-02-10T10:00:00Z"})
	set(testNow)
	fs.failing.Store(true)
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	return ret, err
}

// TestCorrectionWithoutItsRateIsNoFinalReturn: a correction is converted
// at its original period's end rate (Art. 369h(2) Directive 2006/112/EC;
// Art. 61 Implementing Regulation (EU) No 282/2011). When that rate could
// not be read, the return was still "final", with the correction, its
// member state and the total without their period-end VAT: a final return
// with no VAT to declare for Germany. The period's own rate is treated so:
// a rate not published makes the return provisional, saying why; a
// failure to read it is an error. The original period's rate now is too.
func TestCorrectionWithoutItsRateIsNoFinalReturn(t *testing.T) {
	ret, err := correctionRateReturn(t, fx.ErrNoRate)
	if err != nil {
		t.Fatal(err)
	}
	if ret.FX.Rate == nil || len(ret.Corrections) != 1 || ret.Corrections[0].VATEUR != "" {
		t.Fatalf("scenario: rate %+v corrections %+v: want the period's rate and a correction without its own", ret.FX.Rate, ret.Corrections)
	}
	if ret.Status != returns.StatusProvisional || !strings.Contains(ret.StatusReason, "2025-12-31") {
		t.Errorf("status %s (%q), want provisional naming the correction's period-end rate of 2025-12-31; total %+v", ret.Status, ret.StatusReason, ret.Total)
	}

	_, err = correctionRateReturn(t, errors.New("ECB table unreadable"))
	if fiscaltest.Code(err) != fiscal.CodeInternal {
		t.Errorf("reading the correction's rate failed: %v, want INTERNAL as for the period's own rate", err)
	}
}

package rates_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/rates"
)

// TestRateOfTheDayWaitsForTheLocalDay: under the "rate of the day" account
// option a sale at 23:30 UTC on the last embedded publication day (13 April
// 2026) to a consumer in Finland is dated 14 April in Helsinki, whose
// publication is not out: the record waits (fx_rate_unavailable), and
// rates.Retry leaves it alone while the 14 April rate is still missing (the
// 13 April rate, the payment's UTC date, is not the one it waits for).
func TestRateOfTheDayWaitsForTheLocalDay(t *testing.T) {
	seller := fiscaltest.LawSellerOf(t, "us-full")
	seller.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 14, 1, 0, 0, 0, time.UTC), seller))
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	r := settleRecord(t, books, fiscaltest.Request(1, "100", "FI", "2026-04-13T23:30:00Z"))
	if got := reasonCodes(r); r.ReviewStatus != fiscal.StatusPendingReview || len(got) == 0 || got[len(got)-1] != fiscal.ReasonFXRateUnavailable || r.Classification.SupplyDate != "2026-04-14" {
		t.Fatalf("sale at 23:30 UTC to Finland: %s %v supply date %s", r.ReviewStatus, got, r.Classification.SupplyDate)
	}
	if n, err := rates.Retry(ctx, e); err != nil || n != 0 {
		t.Fatalf("Retry without the 14 April publication revised %d (%v), want 0", n, err)
	}
	if r, _, err := books.Record(ctx, r.ID); err != nil || r.Revision != 1 {
		t.Fatalf("revised without its rate: %+v %v", r.History, err)
	}
}

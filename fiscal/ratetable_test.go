package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestEngineDecidesOnLoadedRateTable: an engine given a rate table
// (Config.Rates) decides settlements, resolutions by the rules and a
// person's determinations on it; the same engine without one sends the
// same supply to review as outside its table.
func TestEngineDecidesOnLoadedRateTable(t *testing.T) {
	tbl, first := fiscaltest.NextYearRates(t, "test-extended.1")
	supplyDay := first.AddDate(0, 0, 13) // a weekday or not, it has a previous publication
	now := supplyDay.Add(36 * time.Hour)
	at := supplyDay.Add(14*time.Hour + 30*time.Minute).Format(time.RFC3339)
	fxSrc := fiscaltest.SyntheticUSD(t, first, "ratetable_test")
	ctx := context.Background()

	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.FX = fxSrc
	embedded := fiscaltest.Engine(t, cfg)
	res, err := fiscaltest.Books(t, embedded, 0).Settle(ctx, request(1, "10.00", "FR", at), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || !hasReviewReason(r, vat.ReasonDateOutsideRateTable) {
		t.Fatalf("embedded table on %s: %s %v, want pending date_outside_rate_table", at, r.ReviewStatus, r.ReviewReasons)
	}

	cfg = fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.FX, cfg.Rates = fxSrc, tbl
	e := fiscaltest.Engine(t, cfg)
	if got := e.Settings().Rates; got != tbl {
		t.Fatalf("Settings().Rates = %v, want the loaded table", got.Version())
	}
	b := fiscaltest.Books(t, e, 0)
	res, err = b.Settle(ctx, request(1, "10.00", "FR", at), "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	c := r.Classification
	if r.ReviewStatus != fiscal.StatusProcessed || c.RatePercent == nil || c.RatePercent.String() != "21.5" || c.RateSource == nil || c.RateSource.Table != "test-extended.1" {
		t.Fatalf("loaded table: %s %v rate %v source %+v, want processed at 21.5 %% from test-extended.1", r.ReviewStatus, r.ReviewReasons, c.RatePercent, c.RateSource)
	}
	checkAmounts(t, r)

	// Two records without a country, resolved: by the rules, and by a
	// person at the loaded table's rate.
	for i, manual := range []*fiscal.ManualDetermination{nil, {Regime: vat.RegimeOSSB2C, TaxingCountry: "FR", RatePercent: "21.5", Reason: "customer in France"}} {
		res, err := b.Settle(ctx, request(2+i, "10.00", "", at), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusPendingReview {
			t.Fatalf("record without a country: %s", res.Record.ReviewStatus)
		}
		rr, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{ResolvedBy: "ops@example.com",
			Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, Determination: manual}, "")
		if err != nil {
			t.Fatalf("resolve (manual %v): %v", manual != nil, err)
		}
		c := rr.Record.Classification
		if rr.Record.ReviewStatus != fiscal.StatusProcessed || c.RatePercent == nil || c.RatePercent.String() != "21.5" || c.RateSource == nil || c.RateSource.Table != "test-extended.1" {
			t.Errorf("resolved (manual %v): %s %v rate %v source %+v", manual != nil, rr.Record.ReviewStatus, rr.Record.ReviewReasons, c.RatePercent, c.RateSource)
		}
	}
}

func hasReviewReason(r *fiscal.Record, code string) bool {
	for _, x := range r.ReviewReasons {
		if x.Code == code {
			return true
		}
	}
	return false
}

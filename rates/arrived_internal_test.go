package rates

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestArrivedAsksForTheLocalDay: under the "rate of the day" (Art. 91(2)
// third subparagraph Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112;
// fx.RateOfTheDay) a sale at 23:30 UTC on 13 April 2026, the last embedded
// publication day, to a consumer in Finland waits for the publication of
// 14 April, its day in Helsinki. arrived, which tells Retry whether the
// rates a waiting record needs are known before it decides the record
// again, must ask for that day, not the payment's UTC date, whose rate is
// there: otherwise every refresh decides every such record again for
// nothing until the rate is out.
func TestArrivedAsksForTheLocalDay(t *testing.T) {
	seller := fiscaltest.LawSellerOf(t, "us-full")
	seller.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 14, 1, 0, 0, 0, time.UTC), seller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	const ts = "2026-04-13T23:30:00Z"
	res, err := b.Settle(ctx, fiscaltest.Request(1, "100", "FI", ts), "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if r.ReviewStatus != fiscal.StatusPendingReview || !slices.ContainsFunc(r.ReviewReasons, func(x vat.Reason) bool { return x.Code == fiscal.ReasonFXRateUnavailable }) {
		t.Fatalf("sale at 23:30 UTC to Finland: %s %v, want it waiting for the rate of %s", r.ReviewStatus, r.ReviewReasons, r.Classification.SupplyDate)
	}
	at, _ := time.Parse(time.RFC3339, ts)
	if arrived(ctx, e.Settings(), r, seller, at) {
		t.Errorf("arrived says the rates of a supply dated %s are known; the embedded table ends on 13 April", r.Classification.SupplyDate)
	}
}

package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestAccountSellersEventFollowsItsFXPolicy: an account whose seller
// profile chooses the "rate of the day" (fxPolicy for-day-or-previous,
// Art. 91(2) Directive 2006/112/EC as some member states read it) converts
// its settlements at it; a fiscal event of the same seller's sale is
// decided under the same profile (README: "For the account's own seller
// the profile and its running totals decide"), so it converts at the same
// publication. A review found the event converted at the engine's default
// (the latest publication at the chargeable event: the day before, at
// 08:00 UTC), so the same sale had two EUR amounts.
func TestAccountSellersEventFollowsItsFXPolicy(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	const at = "2026-04-10T08:00:00Z" // before that day's ECB publication
	st, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "DE", at), "")
	if err != nil {
		t.Fatal(err)
	}
	req := request(2, "11.90", seller.LegalName, "IE", "DE")
	req.Payment.Timestamp = at
	ev, err := fiscalevent.New(e).Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	s, f := st.Record.FX.USDPerEUR, ev.Event.FX.USDPerEUR
	if s == nil || f == nil || s.Policy != fx.ForDayOrPrevious || f.Policy != s.Policy || f.RateDate != s.RateDate || ev.Event.FX.GrossEUR != st.Record.FX.GrossEUR {
		t.Fatalf("settlement %+v gross %s; fiscal event %+v gross %s: want the same publication under the seller's policy", s, st.Record.FX.GrossEUR, f, ev.Event.FX.GrossEUR)
	}
}

package returns_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/returns"
)

// TestProvisionalReturnKeepsKnownCorrections: a return of a quarter whose
// period-end rate is not yet published is provisional, without the
// period-end figures of its lines. Its corrections are converted at their
// original quarter's end rate (Art. 61 Implementing Regulation (EU) No
// 282/2011; Art. 369h(2) Directive 2006/112/EC), which is published: each
// correction has its figures, and so has a member state's total made of
// corrections alone, and the corrections part of every state's total.
// Until this version the member state totals dropped them (no vatEur, no
// correctionsVatEur) whenever the return's own rate was missing, so a
// provisional return showed the corrections but not what they do to each
// state.
func TestProvisionalReturnKeepsKnownCorrections(t *testing.T) {
	b, set := newBooksClock(t, time.Date(2026, 2, 12, 12, 0, 0, 0, time.UTC))
	recs := settle(t, b, 1, sale{amount: "24.40", country: "FR", at: "2026-02-10T10:00:00Z"},
		sale{amount: "119.00", country: "DE", at: "2026-02-11T10:00:00Z"})
	set(time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC))
	refund(t, b, recs[0].ID, "", "r-fr")
	refund(t, b, recs[1].ID, "59.50", "r-de")
	settle(t, b, 10, sale{amount: "238.00", country: "DE", at: "2026-04-10T10:00:00Z"})
	ret, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.Status != returns.StatusProvisional || ret.FX.Rate != nil || len(ret.Corrections) != 2 {
		t.Fatalf("status %s rate %+v corrections %+v: want a provisional return with two corrections", ret.Status, ret.FX.Rate, ret.Corrections)
	}
	corr := map[string]decimal.Decimal{}
	for _, c := range ret.Corrections {
		if c.VATEUR == "" || c.USDPerEUR == nil {
			t.Fatalf("correction %+v: want its figures at %s's end rate", c, c.OriginalPeriod)
		}
		corr[c.MemberState] = corr[c.MemberState].Add(decimal.RequireFromString(c.VATEUR))
	}
	for _, st := range ret.MemberStates {
		switch st.MemberState {
		case "FR": // corrections alone: the whole balance is known
			if st.CorrectionsVATEUR != corr["FR"].StringFixed(2) || st.VATEUR != corr["FR"].StringFixed(2) {
				t.Errorf("FR total %+v: want vatEur and correctionsVatEur %s", st, corr["FR"].StringFixed(2))
			}
		case "DE": // a line without its period-end figure, and a correction
			if st.CorrectionsVATEUR != corr["DE"].StringFixed(2) || st.VATEUR != "" {
				t.Errorf("DE total %+v: want correctionsVatEur %s and no vatEur while the line has none", st, corr["DE"].StringFixed(2))
			}
		default:
			t.Errorf("member state %+v", st)
		}
	}
	if ret.Total.VATEUR != "" || ret.Payable.VATEUR != "" {
		t.Errorf("total %+v payable %+v: no period-end VAT while a line lacks it", ret.Total, ret.Payable)
	}
}

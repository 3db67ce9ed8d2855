package httpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestAccountTotalsStateRefundsReduction: GET /v1/account/totals says a
// year is over the Art. 59c EUR 10,000 (exceeded) on the total the sales
// were decided on, which a refund does not lower. A refund reduces the
// taxable amount of the supply it refunds (Art. 90(1) Directive
// 2006/112/EC), and the threshold is "the total value, exclusive of VAT"
// of the supplies (Art. 59c(1)(c)): a year whose counted supplies were
// refunded back within the limit read "exceeded: true" with no hint.
// refundsReductionEur states the refunds' reduction and netOfRefundsEur
// the year's total net of them.
func TestAccountTotalsStateRefundsReduction(t *testing.T) {
	f := newFixtureWith(t, func(c *fiscal.Config) {
		for i := range c.Accounts {
			c.Accounts[i].Seller.OverThreshold = false
		}
	})
	var first string
	for i, s := range []struct{ amount, country string }{{"11000.00", "DE"}, {"5000.00", "FR"}} {
		r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": s.amount, "consumerCountry": s.country, "txHash": txHash(300 + i)})))
		if r.status != 201 {
			t.Fatalf("settle: %d %s", r.status, r.body)
		}
		if i == 0 {
			var rec struct{ ID string }
			json.Unmarshal(r.body, &rec)
			first = rec.ID
		}
	}
	type year struct {
		Year                                                 int
		CrossBorderEur, RefundsReductionEur, NetOfRefundsEur string
		Exceeded                                             bool
	}
	totals := func() year {
		t.Helper()
		r := f.do("GET", "/v1/account/totals", keyA, nil)
		var body struct{ Years []year }
		if r.status != 200 || json.Unmarshal(r.body, &body) != nil || len(body.Years) != 1 {
			t.Fatalf("totals: %d %s", r.status, r.body)
		}
		return body.Years[0]
	}
	if y := totals(); !y.Exceeded || y.RefundsReductionEur != "" || y.NetOfRefundsEur != "" {
		t.Fatalf("before the refund: %+v; want exceeded, no refunds", y)
	}
	r := f.do("POST", "/settlements/"+first+"/refunds", keyA, mustJSON(t, map[string]any{"amountUsdc": "11000.00", "reason": "cancelled"}))
	if r.status != 201 {
		t.Fatalf("refund: %d %s", r.status, r.body)
	}
	var rf struct {
		FX struct{ NetEurExact string }
	}
	if err := json.Unmarshal(r.body, &rf); err != nil {
		t.Fatal(err)
	}
	y := totals()
	total, err1 := decimal.NewFromString(y.CrossBorderEur)
	reduction, err2 := decimal.NewFromString(y.RefundsReductionEur)
	net, err3 := decimal.NewFromString(y.NetOfRefundsEur)
	want, err4 := decimal.NewFromString(rf.FX.NetEurExact)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		t.Fatalf("after the refund: %+v (refund net %q); want the refunds' reduction and the total net of them", y, rf.FX.NetEurExact)
	}
	if !reduction.Equal(want.Abs()) || !net.Equal(total.Sub(reduction)) || net.GreaterThan(decimal.NewFromInt(10000)) || !y.Exceeded {
		t.Errorf("after the refund: %+v; want reduction %s (the refund's net), net of it within EUR 10,000, exceeded as recorded", y, want.Abs())
	}
}

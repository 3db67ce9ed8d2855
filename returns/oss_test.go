package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
)

var q1 = returns.Period{Year: 2026, Quarter: 1}

// quarterSales are Q1 2026 sales in five member states at two rates each
// (standard and e-book), one without a country (pending review), a
// reverse-charge sale to a French business, a domestic Irish sale, and
// sales just around the quarter's edges.
var quarterSales = []sale{
	{"10.70", "DE", "ebook", "", "2026-02-15T10:00:00Z"},
	{"24.40", "FR", "", "", "2026-01-20T09:00:00Z"}, {"10.55", "FR", "ebook", "", "2026-03-02T12:00:00Z"},
	{"36.60", "IT", "", "", "2026-02-01T08:00:00Z"}, {"10.40", "IT", "ebook", "", "2026-03-03T08:00:00Z"},
	{"12.10", "ES", "", "", "2026-02-10T17:00:00Z"}, {"20.80", "ES", "ebook", "", "2026-03-30T23:30:00Z"},
	{"60.50", "NL", "", "", "2026-01-05T11:00:00Z"}, {"10.90", "NL", "ebook", "", "2026-03-10T11:00:00Z"},
	{"11.90", "DE", "", "", "2026-03-31T21:59:59Z"},               // 23:59:59 in Berlin (CEST): Q1
	{"11.90", "FI", "", "", "2026-03-31T21:00:00Z"},               // 00:00 in Helsinki: Q2
	{"11.90", "PT", "", "", "2025-12-31T23:30:00Z"},               // Q4 2025 in Lisbon
	{"12.00", "", "", "", "2026-02-15T10:00:00Z"},                 // pending review
	{"100.00", "FR", "", "FR40303265045", "2026-02-16T10:00:00Z"}, // reverse charge
	{"100.00", "IE", "", "", "2026-02-16T10:00:00Z"},              // domestic
}

// claimsOf reads the signed claims of a record's receipt, verified.
func claimsOf(t testing.TB, b *fiscal.Books, id string) *receipt.Claims {
	t.Helper()
	doc, err := b.Receipt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := b.Engine().JWKS()
	c, err := receipt.Verify(doc, jwks, b.Engine().LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rat parses a decimal string exactly.
func rat(t testing.TB, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal: %q", s)
	}
	return r
}

// cents rounds half away from zero to two decimals, independently of the
// decimal package.
func cents(r *big.Rat) string {
	x := new(big.Rat).Mul(r, big.NewRat(100, 1))
	neg := x.Sign() < 0
	x.Abs(x)
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	s := q.String()
	for len(s) < 3 {
		s = "0" + s
	}
	out := s[:len(s)-2] + "." + s[len(s)-2:]
	if neg && q.Sign() != 0 {
		out = "-" + out
	}
	return out
}

// TestQuarterReturn: the return's figures equal an independent sum of the
// signed receipts, computed here with exact rationals.
func TestQuarterReturn(t *testing.T) {
	ctx := context.Background()
	// On 20 February: a German sale of January and two sales of Q4 2025,
	// then refunds of each: part of the German sale (a line of Q1), all of
	// the Portuguese one and part of the Austrian one (corrections of Q4
	// 2025).
	b, setClock := newBooksClock(t, time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	recs := settle(t, b, 1, sale{"1190.00", "DE", "", "", "2026-01-15T10:00:00Z"},
		sale{"11.90", "PT", "", "", "2025-12-31T23:30:00Z"}, // Q4 2025 in Lisbon
		sale{"24.00", "AT", "", "", "2025-11-10T09:00:00Z"})
	rfs := []*refunds.Refund{refund(t, b, recs[0].ID, "100.00", "r-de"), refund(t, b, recs[1].ID, "", "r-pt"), refund(t, b, recs[2].ID, "12.00", "r-at")}
	setClock(testNow)
	recs = append(recs, settle(t, b, 10, quarterSales...)...)
	ret, doc, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Provisional while the sale without a country waits for review (the
	// return covers every supply of its period, Art. 369g).
	if ret.Status != returns.StatusProvisional || !strings.Contains(ret.StatusReason, "excluded.pending") || ret.FX.Rate == nil || ret.FX.Rate.Raw != "1.1498" || ret.FX.Rate.RateDate != "2026-03-31" {
		t.Fatalf("status %s (%s), rate %+v", ret.Status, ret.StatusReason, ret.FX.Rate)
	}
	if ret.ID.Number != "IE1234567T" || ret.ID.MemberState != "IE" || ret.Scheme != "union" {
		t.Fatalf("identification %+v scheme %s", ret.ID, ret.Scheme)
	}
	usdPerEUR := rat(t, ret.FX.Rate.Raw)

	// The independent sum: every receipt, grouped by what it says.
	type group struct {
		n             int
		usdc, net, vt *big.Rat
		idx           []int64
	}
	groups := map[string]*group{}
	var pending, domestic, reverse int
	for _, r := range recs {
		c := claimsOf(t, b, r.ID)
		ts, _ := time.Parse(time.RFC3339, c.Settlement.Timestamp)
		inQ1 := r.Classification.SupplyDate >= "2026-01-01" && r.Classification.SupplyDate <= "2026-03-31"
		switch {
		case c.ReviewStatus == fiscal.StatusPendingReview:
			pending++
			continue
		case !inQ1:
			if ts.After(time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)) && ts.Before(time.Date(2026, 3, 31, 20, 0, 0, 0, time.UTC)) {
				t.Fatalf("%s dated %s outside Q1", r.ID, r.Classification.SupplyDate)
			}
			continue
		case c.Classification.Regime == "DOMESTIC":
			domestic++
			continue
		case c.Classification.Regime == "REVERSE_CHARGE_B2B":
			reverse++
			continue
		}
		k := c.Classification.TaxingCountry + " " + c.Classification.RatePercent
		g := groups[k]
		if g == nil {
			g = &group{usdc: new(big.Rat), net: new(big.Rat), vt: new(big.Rat)}
			groups[k] = g
		}
		g.n++
		g.usdc.Add(g.usdc, rat(t, c.Settlement.AmountUSDC))
		g.net.Add(g.net, rat(t, c.FX.NetEURExact))
		g.vt.Add(g.vt, rat(t, c.FX.VATEURExact))
		g.idx = append(g.idx, r.Ledger.Index)
	}
	corr := map[string]*group{}
	for _, rf := range rfs {
		c := claimsOf(t, b, rf.ID)
		if !strings.HasPrefix(c.FX.GrossEUR, "-") || c.Supersedes == "" {
			t.Fatalf("refund receipt %+v", c.FX)
		}
		k := c.Classification.TaxingCountry + " " + c.Classification.RatePercent
		m := groups
		if rf.Classification.SupplyDate < "2026-01-01" {
			m = corr
		}
		g := m[k]
		if g == nil {
			g = &group{usdc: new(big.Rat), net: new(big.Rat), vt: new(big.Rat)}
			m[k] = g
		}
		g.n++
		g.usdc.Sub(g.usdc, rat(t, c.Settlement.AmountUSDC))
		g.net.Add(g.net, rat(t, c.FX.NetEURExact))
		g.vt.Add(g.vt, rat(t, c.FX.VATEURExact))
		g.idx = append(g.idx, rf.Ledger.Index)
	}
	if pending != 1 || domestic != 1 || reverse != 1 || len(groups) != 10 || len(corr) != 2 {
		t.Fatalf("scenario: %d pending, %d domestic, %d reverse charge, %d groups", pending, domestic, reverse, len(groups))
	}
	if len(ret.Lines) != len(groups) {
		t.Fatalf("%d lines, %d groups", len(ret.Lines), len(groups))
	}
	states := map[string]bool{}
	for _, l := range ret.Lines {
		states[l.MemberState] = true
		g := groups[l.MemberState+" "+l.RatePercent]
		if g == nil {
			t.Fatalf("line %s %s has no receipts", l.MemberState, l.RatePercent)
		}
		pct := rat(t, l.RatePercent)
		gross := new(big.Rat).Quo(g.usdc, usdPerEUR)
		net := new(big.Rat).Quo(new(big.Rat).Mul(gross, big.NewRat(100, 1)), new(big.Rat).Add(pct, big.NewRat(100, 1)))
		vatAmt := new(big.Rat).Sub(gross, net)
		want := returns.Amounts{Records: g.n, AmountUSDC: g.usdc.FloatString(6), TaxableAmountEUR: cents(net), VATEUR: cents(vatAmt),
			InvoiceTaxableAmountEUR: cents(g.net), InvoiceVATEUR: cents(g.vt)}
		got := l.Amounts
		got.DifferenceVATEUR = ""
		if got != want {
			t.Errorf("line %s %s %%:\n got %+v\nwant %+v", l.MemberState, l.RatePercent, got, want)
		}
		if len(l.LedgerIndexes) != len(g.idx) {
			t.Errorf("line %s %s: indexes %v, receipts %v", l.MemberState, l.RatePercent, l.LedgerIndexes, g.idx)
		}
		if l.SupplyType != returns.SupplyServices {
			t.Errorf("supply type %q", l.SupplyType)
		}
	}
	if len(states) != 5 {
		t.Fatalf("%d member states", len(states))
	}
	// Corrections of Q4 2025, at Q4 2025's period-end rate.
	if len(ret.Corrections) != 2 {
		t.Fatalf("corrections %+v", ret.Corrections)
	}
	for _, c := range ret.Corrections {
		g := corr[c.MemberState+" "+c.RatePercent]
		if g == nil || c.OriginalPeriod != "2025-Q4" || c.USDPerEUR == nil || c.USDPerEUR.RateDate != "2025-12-31" {
			t.Fatalf("correction %+v", c)
		}
		rate, pct := rat(t, c.USDPerEUR.Raw), rat(t, c.RatePercent)
		gross := new(big.Rat).Quo(g.usdc, rate)
		net := new(big.Rat).Quo(new(big.Rat).Mul(gross, big.NewRat(100, 1)), new(big.Rat).Add(pct, big.NewRat(100, 1)))
		want := returns.Amounts{Records: g.n, AmountUSDC: g.usdc.FloatString(6), TaxableAmountEUR: cents(net), VATEUR: cents(new(big.Rat).Sub(gross, net)),
			InvoiceTaxableAmountEUR: cents(g.net), InvoiceVATEUR: cents(g.vt)}
		got := c.Amounts
		got.DifferenceVATEUR = ""
		if got != want || !strings.HasPrefix(c.VATEUR, "-") {
			t.Errorf("correction %s %s:\n got %+v\nwant %+v", c.MemberState, c.RatePercent, got, want)
		}
	}
	// The member state totals add lines and corrections.
	for _, st := range ret.MemberStates {
		if st.MemberState == "PT" && (st.CorrectionsVATEUR == "" || st.VATEUR != st.CorrectionsVATEUR) {
			t.Errorf("PT total %+v", st)
		}
	}
	// The example of the issue: 1190 USDC to Germany on 2026-01-15 is EUR
	// 165.25 of VAT at the Q1 period-end rate 1.1498.
	for _, l := range ret.Lines {
		if l.MemberState == "DE" && l.RatePercent == "19" {
			one := returns.Amounts{}
			n, v := returns.PeriodEndSplit(decimal.RequireFromString("1190"), decimal.RequireFromString("19"), decimal.RequireFromString("1.1498"))
			one.TaxableAmountEUR, one.VATEUR = n.StringFixed(2), v.StringFixed(2)
			if one.VATEUR != "165.25" {
				t.Fatalf("1190 USDC at 1.1498: VAT %s, want 165.25", one.VATEUR)
			}
		}
	}

	// Pending and non-OSS sales are apart, with their indexes.
	if ret.Excluded.Pending.Records != 1 || ret.Excluded.Pending.AmountUSDC != "12.000000" {
		t.Errorf("pending %+v", ret.Excluded.Pending)
	}
	regimes := map[string]string{}
	for _, s := range ret.NotInOSS {
		regimes[s.Regime] = s.Country
	}
	if regimes["REVERSE_CHARGE_B2B"] != "FR" || regimes["DOMESTIC"] != "IE" || len(regimes) != 2 {
		t.Errorf("not in OSS: %+v", ret.NotInOSS)
	}

	// Signed: the JWS payload is the return, under the receipt key set.
	jwks, _ := b.Engine().JWKS()
	payload, _, err := receipt.VerifyStatement(doc.JWS, jwks, returns.StatementType)
	if err != nil || !bytes.Equal(payload, doc.Return) {
		t.Fatalf("statement: %v", err)
	}
	var back returns.Return
	if err := json.Unmarshal(doc.Return, &back); err != nil || back.Log.Size == 0 || back.Log.Note == "" {
		t.Fatalf("log checkpoint %+v: %v", back.Log, err)
	}
	// A receipt's JWS is not a statement, nor the reverse.
	rdoc, _ := b.Receipt(ctx, recs[0].ID)
	var rr receipt.Receipt
	_ = json.Unmarshal(rdoc, &rr)
	if _, _, err := receipt.VerifyStatement(rr.JWS, jwks, returns.StatementType); err == nil {
		t.Fatal("a receipt verified as a return")
	}

	// A closed quarter whose records are all decided (the pending sale
	// resolved, an Irish consumer's: domestic) is final: the same bytes
	// again, even after later sales of another quarter.
	for _, r := range recs {
		if r.ReviewStatus == fiscal.StatusPendingReview {
			if _, err := b.Resolve(ctx, r.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "IE"}, ResolvedBy: "ops@example.com"}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	fin, finDoc, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fin.Status != returns.StatusFinal || fin.Excluded.Pending.Records != 0 {
		t.Fatalf("status %s (%s), pending %+v: every record decided", fin.Status, fin.StatusReason, fin.Excluded.Pending)
	}
	settle(t, b, 100, sale{"11.90", "DE", "", "", "2026-04-05T10:00:00Z"})
	_, again, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Return, finDoc.Return) || again.JWS != finDoc.JWS {
		t.Fatal("a final return changed between two requests")
	}

	// CSV: one row per review item, then per line, per non-OSS summary and
	// the pending bucket, with the identification on every row.
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(ret.Review)+10+2+len(ret.MemberStates)+1+2+1 || strings.Join(rows[0], ",") != strings.Join(returns.CSVHeader, ",") {
		t.Fatalf("%d CSV rows: %v", len(rows), rows[0])
	}
	for _, row := range rows[1:] {
		if row[0] != "2026-Q1" || row[3] != "IE1234567T" || row[4] != "IE" {
			t.Fatalf("row %v", row)
		}
	}
}

// TestOpenQuarterProvisional: a quarter that has not ended, and one whose
// period-end rate is not published, are provisional; a quarter not begun
// is refused.
func TestOpenQuarterProvisional(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	b := newBooks(t, now)
	settle(t, b, 1, sale{"11.90", "DE", "", "", "2026-04-10T10:00:00Z"})
	ret, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.Status != returns.StatusProvisional || ret.FX.Rate != nil || ret.FX.Unavailable == "" || len(ret.Lines) != 1 ||
		ret.Lines[0].VATEUR != "" || ret.Lines[0].InvoiceVATEUR == "" || ret.Log.Size != 1 {
		t.Fatalf("open quarter: %+v", ret)
	}
	_, _, err = returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 3}, returns.Options{})
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "period" {
		t.Fatalf("future quarter: %v", err)
	}
	for _, s := range []string{"2026Q1", "2026-Q5", "26-Q1", "2026-q1", ""} {
		if _, err := returns.ParsePeriod(s); fiscaltest.Code(err) != fiscal.CodeBadRequest {
			t.Errorf("%q: %v", s, err)
		}
	}
}

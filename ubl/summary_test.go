package ubl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestSummarize10000MicroAmounts proves the rounding rule on 10,000
// sub-cent supplies: per (category, rate) the VAT is the exact sum times
// the rate, rounded once half up, computed here independently in integer
// micro-euros; the taxable amount is the exact sum rounded once; the
// rendered invoice's VAT is that sum of per-rate VATs.
func TestSummarize10000MicroAmounts(t *testing.T) {
	supplies := microSupplies(10000)
	// Independent computation: integer micro-euros per rate (19 and 7).
	micro := map[string]int64{}
	perLineCents := map[string]int64{} // what rounding each supply to the cent would give
	count := map[string]int{}
	for _, s := range supplies {
		count[s.RatePercent.String()]++
		m := s.NetAmount.Shift(6).IntPart()
		micro[s.RatePercent.String()] += m
		perLineCents[s.RatePercent.String()] += (m + 5000) / 10000
	}
	sum, err := Summarize("API requests", SummaryPerRate, supplies)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Subtotals) != 2 || len(sum.Lines) != 2 {
		t.Fatalf("%d subtotals, %d lines", len(sum.Subtotals), len(sum.Lines))
	}
	var totalVATCents int64
	for i, st := range sum.Subtotals {
		rate := st.RatePercent.IntPart()
		m := micro[st.RatePercent.String()]
		baseCents := (m + 5000) / 10000         // round half up to the cent, once
		vatCents := (m*rate + 500000) / 1000000 // m µEUR × rate % = m·rate/10^8 EUR = m·rate/10^6 cents
		if got := st.TaxableAmount.Shift(2).IntPart(); got != baseCents || !st.TaxableAmount.Equal(st.TaxableAmount.Round(2)) {
			t.Errorf("rate %d: taxable amount %s, want %d cents", rate, st.TaxableAmount, baseCents)
		}
		if got := st.TaxAmount.Shift(2).IntPart(); got != vatCents {
			t.Errorf("rate %d: VAT %s, want %d cents", rate, st.TaxAmount, vatCents)
		}
		if !sum.Exact[i].Equal(decimal.New(m, -6)) || !sum.Lines[i].PriceAmount.Equal(sum.Exact[i]) {
			t.Errorf("rate %d: exact sum %s / price %s, want %d µEUR", rate, sum.Exact[i], sum.Lines[i].PriceAmount, m)
		}
		totalVATCents += vatCents
		// Rounding each supply to the cent first would change the base:
		// that is why per-supply lines are refused for sub-cent amounts.
		t.Logf("rate %d %%: %d supplies, exact %s EUR, base %d cents, VAT %d cents; rounding each supply first would give a base of %d cents",
			rate, count[st.RatePercent.String()], sum.Exact[i], baseCents, vatCents, perLineCents[st.RatePercent.String()])
		if perLineCents[st.RatePercent.String()] == baseCents {
			t.Errorf("rate %d: per-supply rounding happens to agree; the data set does not show the difference", rate)
		}
	}
	if sum.Period != (Period{Start: "2026-11-01", End: "2026-11-30"}) {
		t.Errorf("period %+v", sum.Period)
	}
	if !strings.HasPrefix(sum.Lines[0].Name, "API requests: 8000 supplies, 2026-11-01 to 2026-11-30") ||
		!strings.HasPrefix(sum.Lines[1].Name, "API requests: 2000 supplies, 2026-11-01 to 2026-11-30") {
		t.Errorf("line names %q, %q", sum.Lines[0].Name, sum.Lines[1].Name)
	}
	inv := b2c("F402-1", "DE", "19", "1.00")
	inv.Lines, inv.Subtotals, inv.Period = sum.Lines, sum.Subtotals, &sum.Period
	tot, err := inv.Totals()
	if err != nil {
		t.Fatalf("the summary does not render: %v", err)
	}
	if got := tot.Tax.Shift(2).IntPart(); got != totalVATCents {
		t.Errorf("invoice VAT %s, want %d cents", tot.Tax, totalVATCents)
	}
}

// TestSummarizeRandom: for many random sets of supplies at several rates,
// the summary renders (its VAT is within the renderer's 0.01 tolerance of
// base × rate, BR-CO-17) and each VAT is round(exact × rate) exactly.
func TestSummarizeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2026))
	rates := []string{"19", "7", "25.5", "5.5", "27", "8", "21"}
	for i := range 300 {
		n := 1 + r.IntN(400)
		supplies := make([]Supply, n)
		for j := range supplies {
			supplies[j] = Supply{
				Date:      fmt.Sprintf("2026-11-%02d", 1+r.IntN(30)),
				NetAmount: decimal.New(r.Int64N(50_000_000), -6), // 0 to 49.999999
				Category:  "S", RatePercent: d(pick(r, rates)),
			}
		}
		sum, err := Summarize("x", SummaryPerRate, supplies)
		if err != nil {
			t.Fatal(err)
		}
		for k, st := range sum.Subtotals {
			if want := sum.Exact[k].Mul(st.RatePercent).Shift(-2).Round(2); !st.TaxAmount.Equal(want) {
				t.Fatalf("set %d: VAT %s, want %s", i, st.TaxAmount, want)
			}
		}
		inv := b2c("F402-1", "DE", "19", "1.00")
		inv.Lines, inv.Subtotals, inv.Period = sum.Lines, sum.Subtotals, &sum.Period
		if _, err := RenderInvoice(inv); err != nil {
			t.Fatalf("set %d does not render: %v", i, err)
		}
	}
}

func TestSummarizePerSupply(t *testing.T) {
	supplies := centSupplies(5)
	sum, err := Summarize("API request", SummaryPerSupply, supplies)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Lines) != 5 || sum.Lines[2].Period.Start != "2026-11-03" || !sum.Lines[2].NetAmount.Equal(d("0.27")) {
		t.Errorf("lines %+v", sum.Lines)
	}
	if len(sum.Subtotals) != 1 || !sum.Subtotals[0].TaxableAmount.Equal(d("1.35")) || !sum.Subtotals[0].TaxAmount.IsZero() {
		t.Errorf("subtotals %+v", sum.Subtotals)
	}
	supplies[3].NetAmount = d("0.285")
	_, err = Summarize("API request", SummaryPerSupply, supplies)
	expectProblem(t, nil, err, wantProblem{"Supplies[3].NetAmount", "BR-DEC-23", ErrDecimals})
	if _, err := Summarize("API request", SummaryPerRate, supplies); err != nil {
		t.Errorf("per rate: %v", err)
	}
}

func TestSummarizeRejects(t *testing.T) {
	good := Supply{Date: "2026-11-01", NetAmount: d("0.001"), Category: "S", RatePercent: d("19")}
	for _, tc := range []struct {
		name     string
		item     string
		supplies []Supply
		want     wantProblem
	}{
		{"no supplies", "x", nil, wantProblem{"Supplies", "BR-16", ErrRequired}},
		{"no item name", "", []Supply{good}, wantProblem{"itemName", "BR-25", ErrRequired}},
		{"7 decimals", "x", []Supply{{Date: "2026-11-01", NetAmount: d("0.0000001"), Category: "S", RatePercent: d("19")}}, wantProblem{"Supplies[0].NetAmount", "", ErrDecimals}},
		{"negative", "x", []Supply{{Date: "2026-11-01", NetAmount: d("-0.01"), Category: "S", RatePercent: d("19")}}, wantProblem{"Supplies[0].NetAmount", "", ErrRange}},
		{"bad date", "x", []Supply{{Date: "2026-11-31", NetAmount: d("0.01"), Category: "S", RatePercent: d("19")}}, wantProblem{"Supplies[0].Date", "PEPPOL-EN16931-F001", ErrFormat}},
		{"bad category", "x", []Supply{{Date: "2026-11-01", NetAmount: d("0.01"), Category: "X"}}, wantProblem{"Supplies[0].Category", "BR-CL-18", ErrCode}},
		{"two reasons in one group", "x", []Supply{{Date: "2026-11-01", NetAmount: d("0.01"), Category: "AE"}, {Date: "2026-11-01", NetAmount: d("0.01"), Category: "AE", ExemptionReason: "Autoliquidation"}},
			wantProblem{"Supplies[1].ExemptionReason", "", ErrMismatch}},
		{"zero rate S", "x", []Supply{{Date: "2026-11-01", NetAmount: d("0.01"), Category: "S"}}, wantProblem{"Supplies[0].RatePercent", "BR-S-05", ErrRange}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Summarize(tc.item, SummaryPerRate, tc.supplies)
			expectProblem(t, nil, err, tc.want)
		})
	}
}

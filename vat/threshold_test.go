package vat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// summaryPlace is summary without the location_single_assertion note. The
// cases of the threshold, registration and interface tests state the
// customer's country alone, so every one of them carries that note
// (evidence.go, asserted by the evidence cases of golden_cases_test.go); it
// says nothing about the rule under test.
func summaryPlace(d Determination) string {
	s := summary(d)
	for _, cut := range []string{"location_single_assertion,", ",location_single_assertion", "location_single_assertion"} {
		s = strings.Replace(s, cut, "", 1)
	}
	return s
}

// thresholdLine renders the section: rule year before+counted=after crossed counts.
func thresholdLine(th *ThresholdCheck) string {
	if th == nil {
		return "none"
	}
	opt := func(p *decimal.Decimal) string {
		if p == nil {
			return "-"
		}
		return p.String()
	}
	s := dashIfEmpty(th.Rule) + " " + itoa(th.Year) + " " + th.TotalBefore.String() + "+" + opt(th.Counted) + "=" + opt(th.TotalAfter)
	if th.Crossed {
		s += " crossed"
	}
	if !th.Counts {
		s += " not-counted"
	}
	return s
}

func itoa(i int) string { return decimal.NewFromInt(int64(i)).String() }

// TestThresholdDecisions: expectations computed by hand from Art. 59c and
// the standard rates of the embedded rate table (AT 20, FR 20, IE 23, DE 19;
// vat/ratedata, each with its source): e.g. EUR 1,230
// VAT-inclusive at IE 23 % is EUR 1,000 exclusive of VAT.
func TestThresholdDecisions(t *testing.T) {
	on := day(2026, time.March, 2)
	supply := func(kind, gross string) Supply {
		return Supply{Kind: kind, Date: on, GrossEUR: dec(gross)}
	}
	vatIE := Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}
	cases := []struct {
		name      string
		in        Input
		want      string // summary
		threshold string
	}{
		{"exactly EUR 10,000 does not exceed",
			Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), supply(KindSaaS, "1200")},
			"DETERMINED DOMESTIC S 20 AT pos=AT - B2C [origin_taxation_below_threshold]", "within_threshold 2026 9000+1000=10000"},
		{"one cent more exceeds: this supply is taxed at destination",
			Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), supply(KindSaaS, "1200.012")},
			"DETERMINED OSS_B2C/union S 20 FR pos=FR - B2C [threshold_exceeded_by_this_supply]", "exceeded_by_this_supply 2026 9000+1000.01=10000.01 crossed"},
		{"IE seller within at its own rate",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9000")}, b2c("DE"), supply(KindSaaS, "1230")},
			"DETERMINED DOMESTIC S 23 IE pos=IE - B2C [origin_taxation_below_threshold]", "within_threshold 2026 9000+1000=10000"},
		{"IE seller crossing: counted at the origin rate it was tested with",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9000")}, b2c("DE"), supply(KindSaaS, "1231.23")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C [threshold_exceeded_by_this_supply]", "exceeded_by_this_supply 2026 9000+1001=10001 crossed"},
		{"previous year over: destination from the first supply, counted at the destination rate",
			Input{Seller{Country: "IE", CrossBorder: totals("10000.01", "0")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []", "previous_year_exceeded 2026 0+1000=1000"},
		{"previous year exactly EUR 10,000 is within",
			Input{Seller{Country: "IE", CrossBorder: totals("10000", "0")}, b2c("DE"), supply(KindSaaS, "1230")},
			"DETERMINED DOMESTIC S 23 IE pos=IE - B2C [origin_taxation_below_threshold]", "within_threshold 2026 0+1000=1000"},
		{"opening figure already over this year",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "12000")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []", "current_year_exceeded 2026 12000+1000=13000"},
		{"overThreshold keeps meaning already over",
			Input{Seller{Country: "IE", OverThreshold: true, CrossBorder: totals("0", "0")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []", "stated_over_threshold 2026 0+1000=1000"},
		{"option for destination (Art. 59c(3)) still counts",
			Input{Seller{Country: "IE", OptedForDestination: true, CrossBorder: totals("0", "0")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []", "opted_for_destination 2026 0+1000=1000"},
		{"domestic supply does not count",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, b2c("IE"), supply(KindSaaS, "5000")},
			"DETERMINED DOMESTIC S 23 IE pos=IE - B2C []", "not_counted 2026 9999+-=9999 not-counted"},
		{"B2B supply does not count",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, vatIE, supply(KindSaaS, "5000")},
			"DETERMINED REVERSE_CHARGE_B2B AE 0 AT pos=AT VATEX-EU-AE B2B []", "not_counted 2026 9999+-=9999 not-counted"},
		{"consumer outside the EU does not count",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, b2c("CH"), supply(KindSaaS, "5000")},
			"DETERMINED OUTSIDE_SCOPE O - - pos=CH VATEX-EU-O B2C [local_tax_not_assessed]", "not_counted 2026 9999+-=9999 not-counted"},
		{"Canary Islands are no member state for Art. 59c",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, Buyer{Country: "ES", PostalCode: "35001"}, supply(KindSaaS, "5000")},
			"DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [local_tax_not_assessed]", "not_counted 2026 9999+-=9999 not-counted"},
		{"non-EU seller has no threshold",
			Input{Seller{Country: "US", CrossBorder: totals("0", "0")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/non-union S 19 DE pos=DE - B2C []", "none"},
		{"second establishment removes the threshold",
			Input{Seller{Country: "IE", OtherEstablishments: []string{"FR"}, CrossBorder: totals("0", "0")}, b2c("DE"), supply(KindSaaS, "1190")},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []", "none"},
		{"no totals: the flags decide, as before",
			Input{Seller{Country: "IE"}, b2c("DE"), supply(KindSaaS, "100000")},
			"DETERMINED DOMESTIC S 23 IE pos=IE - B2C [origin_taxation_below_threshold]", "none"},
		{"open B2B claim: counting waits for the registry",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "0")}, Buyer{Country: "AT", VATNumber: "ATU13585627"}, supply(KindSaaS, "1190")},
			"MANUAL_REVIEW_REQUIRED - - - - pos=AT - - [vat_number_unverified]", "none"},
		{"negative total",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "-1")}, b2c("DE"), supply(KindSaaS, "1190")},
			"MANUAL_REVIEW_REQUIRED - - - - pos=DE - B2C [threshold_input_invalid]", "- 2026 -1+-=-"},
		{"amount missing",
			Input{Seller{Country: "IE", CrossBorder: totals("0", "0")}, b2c("DE"), Supply{Kind: KindSaaS, Date: on}},
			"MANUAL_REVIEW_REQUIRED - - - - pos=DE - B2C [threshold_input_invalid]", "- 2026 0+-=-"},
		{"origin rate unknown: review, nothing counted",
			Input{Seller{Country: "FI", CrossBorder: totals("0", "0")}, b2c("DE"), supply(KindStreaming, "100")},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - FI pos=FI - B2C [rate_unverified,origin_taxation_below_threshold]", "within_threshold 2026 0+-=-"},
	}
	for _, c := range cases {
		d := Determine(c.in)
		checkInvariants(t, c.in, d)
		if s := summaryPlace(d); s != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, s, c.want)
			for _, r := range d.Reasons {
				t.Logf("  %s: %s", r.Code, r.Detail)
			}
		}
		if got := thresholdLine(d.Threshold); got != c.threshold {
			t.Errorf("%s: threshold %q, want %q", c.name, got, c.threshold)
		}
	}
}

// TestThresholdSequence plays the engine: three sales of 6,000 USDC by an
// Irish seller to German consumers, each decided on the totals the ledger
// holds after the previous one (append order). USD per EUR: ECB reference
// rates of the days (fx/data/ecb-eurusd.csv), USDC at par with USD.
func TestThresholdSequence(t *testing.T) {
	steps := threeSalesToGermany()
	var crossed []int
	for i, st := range steps {
		if i < 2 && (st.d.TaxingCountry != "IE" || st.d.RatePercent.String() != "23" || st.d.Threshold.Rule != ThresholdWithin) {
			t.Errorf("sale %d: %s %s, want Irish 23 %% within the threshold", i+1, summaryPlace(st.d), thresholdLine(st.d.Threshold))
		}
		if st.d.Threshold.Crossed {
			crossed = append(crossed, i+1)
		}
	}
	last := steps[2].d
	if last.TaxingCountry != "DE" || last.RatePercent.String() != "19" || last.Threshold.Rule != ThresholdCrossed {
		t.Errorf("sale 3: %s %s, want German 19 %% from the crossing supply", summaryPlace(last), thresholdLine(last.Threshold))
	}
	if len(crossed) != 1 || crossed[0] != 3 {
		t.Errorf("crossed on sales %v, want exactly the third", crossed)
	}
	// Hand check: 6,000 / 1.1698 / 1.23 = 4,169.99 (2 d.p.).
	if c := steps[0].d.Threshold.Counted.StringFixed(2); c != "4169.99" {
		t.Errorf("first sale counted %s, want 4169.99", c)
	}
	// A fourth sale in the same year: already over, destination.
	next := Input{Seller{Country: "IE", CrossBorder: &CrossBorderTotals{CurrentYear: *last.Threshold.TotalAfter}}, b2c("DE"), Supply{Kind: KindSaaS, Date: day(2026, time.April, 13), GrossEUR: dec("100")}}
	if d := Determine(next); d.Threshold.Rule != ThresholdCurrentYear || d.TaxingCountry != "DE" || d.Threshold.Crossed {
		t.Errorf("fourth sale: %s %s", summaryPlace(d), thresholdLine(d.Threshold))
	}
}

type seqStep struct {
	in Input
	d  Determination
}

// threeSalesToGermany runs the sequence through a minimal ledger:
// the running total of the year is the sum of Counted.
func threeSalesToGermany() []seqStep {
	sales := []struct {
		at     time.Time
		usdEUR string // ECB reference rate, US dollars per euro
	}{
		{day(2026, time.March, 2), "1.1698"},
		{day(2026, time.April, 9), "1.1685"},
		{day(2026, time.April, 10), "1.1711"},
	}
	total := decimal.Zero
	var out []seqStep
	for _, s := range sales {
		gross := dec("6000").DivRound(dec(s.usdEUR), 10)
		in := Input{Seller{Country: "IE", CrossBorder: &CrossBorderTotals{CurrentYear: total}}, b2c("DE"), Supply{Kind: KindSaaS, Date: s.at, GrossEUR: gross}}
		d := Determine(in)
		if d.Threshold != nil && d.Threshold.Counted != nil {
			total = total.Add(*d.Threshold.Counted)
		}
		out = append(out, seqStep{in, d})
	}
	return out
}

// TestThresholdAcrossNewYear: an Austrian seller crosses on 31 December
// (local time) and its first supply of the new year, one hour later by the
// clock in Vienna, is taxed at destination because the previous year
// exceeded. 22:59 UTC is 23:59 in Vienna; 23:01 UTC is 00:01 on 1 January.
func TestThresholdAcrossNewYear(t *testing.T) {
	dec31 := Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), Supply{Kind: KindSaaS, Date: utc(2025, time.December, 31, 22, 59), GrossEUR: dec("1500")}}
	d := Determine(dec31)
	if d.Threshold.Year != 2025 || !d.Threshold.Crossed || d.TaxingCountry != "FR" || d.SupplyDate != "2025-12-31" {
		t.Fatalf("31 December: %s %s %s", summaryPlace(d), thresholdLine(d.Threshold), d.SupplyDate)
	}
	jan1 := Input{Seller{Country: "AT", CrossBorder: &CrossBorderTotals{PreviousYear: *d.Threshold.TotalAfter}}, b2c("FR"), Supply{Kind: KindSaaS, Date: utc(2025, time.December, 31, 23, 1), GrossEUR: dec("120")}}
	if y := jan1.Seller.ThresholdYear(jan1.Supply.Date); y != 2026 {
		t.Fatalf("ThresholdYear = %d, want 2026 (Vienna)", y)
	}
	d = Determine(jan1)
	if d.Threshold.Year != 2026 || d.Threshold.Rule != ThresholdPreviousYear || d.TaxingCountry != "FR" || d.Threshold.Crossed || d.Threshold.Counted.String() != "100" {
		t.Errorf("1 January: %s %s", summaryPlace(d), thresholdLine(d.Threshold))
	}
}

func TestThresholdJSON(t *testing.T) {
	d := Determine(Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), Supply{Kind: KindSaaS, Date: sep1, GrossEUR: dec("1200.012")}})
	b, err := json.Marshal(d.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rule":"exceeded_by_this_supply","year":2026,"limit":"10000","previousYear":"0","totalBefore":"9000","counts":true,"counted":"1000.01","totalAfter":"10000.01","crossed":true,"legalBasis":"Art. 59c(2) Directive 2006/112/EC: threshold exceeded during the year, Art. 58 applies as of that supply"}`
	if string(b) != want {
		t.Errorf("threshold JSON\n got  %s\n want %s", b, want)
	}
}

// BenchmarkDetermineWithThreshold: the determination the engine runs per
// settlement, with the seller's running totals (no ledger scan: the totals
// are an input), registrations and the local day.
func BenchmarkDetermineWithThreshold(b *testing.B) {
	reg := regs("national:IE", "oss_union:IE")
	inputs := []Input{
		{Seller{Country: "IE", CrossBorder: totals("0", "8340.12"), Registrations: reg}, b2c("DE"), Supply{Kind: KindSaaS, Date: day(2026, time.April, 10), GrossEUR: dec("5123.3882674409")}},
		{Seller{Country: "IE", CrossBorder: totals("0", "1000"), Registrations: reg}, b2c("FR"), Supply{Kind: KindDigitalService, Date: sep1, GrossEUR: dec("12.3")}},
		{Seller{Country: "IE", CrossBorder: totals("12000", "1000"), Registrations: reg}, Buyer{Country: "PT", PostalCode: "9500-123"}, Supply{Kind: KindDigitalService, Date: sep1, GrossEUR: dec("1.16")}},
		{Seller{Country: "IE", CrossBorder: totals("0", "1000"), Registrations: reg}, b2c("IE"), Supply{Kind: KindEbook, Date: sep1, GrossEUR: dec("9.99")}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if d := Determine(inputs[i%len(inputs)]); d.Threshold == nil {
			b.Fatal("no threshold section")
		}
	}
}

// BenchmarkThresholdDecision: the determination of
// fiscal.BenchmarkThresholdDecision alone (issue 16): an Irish seller
// within the threshold, a German consumer, running totals at the
// precision the engine keeps (10 decimal places), its registrations.
func BenchmarkThresholdDecision(b *testing.B) {
	in := Input{
		Seller: Seller{Country: "IE", VATNumber: "IE1234567T", CrossBorder: totals("0", "420.1680672000"), Registrations: regs("national:IE", "oss_union:IE")},
		Buyer:  b2c("DE"),
		Supply: Supply{Kind: KindSaaS, Date: time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC), GrossEUR: dec("10.17")},
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := Determine(in); !d.Determined() || d.Threshold == nil || d.Threshold.Rule != ThresholdWithin {
			b.Fatalf("%+v", d)
		}
	}
}

// FuzzDetermineThreshold checks the threshold section's arithmetic and its
// agreement with the place of supply on arbitrary totals, amounts and
// instants.
func FuzzDetermineThreshold(f *testing.F) {
	f.Add("IE", "DE", "0", "8344.61", "5123.39", int64(1775822400), false, false)
	f.Add("AT", "FR", "0", "9000", "1200", int64(1767221940), false, false)
	f.Add("DE", "DE", "10000.01", "-5", "0", int64(1735689600), true, true)
	f.Fuzz(func(t *testing.T, seller, buyer, prev, cur, gross string, unix int64, over, opted bool) {
		p, err1 := decimal.NewFromString(prev)
		c, err2 := decimal.NewFromString(cur)
		g, err3 := decimal.NewFromString(gross)
		if err1 != nil || err2 != nil || err3 != nil || p.Exponent() < -20 || c.Exponent() < -20 || g.Exponent() < -20 ||
			p.Abs().GreaterThan(dec("1e15")) || c.Abs().GreaterThan(dec("1e15")) || g.Abs().GreaterThan(dec("1e15")) {
			return
		}
		in := Input{
			Seller: Seller{Country: seller, OverThreshold: over, OptedForDestination: opted, CrossBorder: &CrossBorderTotals{PreviousYear: p, CurrentYear: c}},
			Buyer:  b2c(buyer),
			Supply: Supply{Kind: KindSaaS, Date: time.Unix(unix%(1<<34), 0), GrossEUR: g},
		}
		d := Determine(in)
		checkInvariants(t, in, d)
		th := d.Threshold
		if th == nil {
			return
		}
		if !th.TotalBefore.Equal(c) || !th.PreviousYear.Equal(p) || th.Year != in.Seller.ThresholdYear(in.Supply.Date) {
			t.Fatalf("section does not echo its inputs: %+v", th)
		}
		if th.Counted != nil && (th.TotalAfter == nil || !th.TotalAfter.Equal(th.TotalBefore.Add(*th.Counted))) {
			t.Fatalf("after != before + counted: %s", thresholdLine(th))
		}
		if th.Crossed != (th.Rule == ThresholdCrossed) || th.Crossed && !(th.TotalBefore.LessThanOrEqual(thresholdLimit) && th.TotalAfter.GreaterThan(thresholdLimit)) {
			t.Fatalf("crossed inconsistent: %s", thresholdLine(th))
		}
		if !d.Determined() {
			return
		}
		origin := d.TaxingCountry == d.PlaceOfSupply && d.Regime == RegimeDomestic && normalizeCountry(seller) != normalizeCountry(buyer)
		if (th.Rule == ThresholdWithin) != origin {
			t.Fatalf("rule %s but %s", th.Rule, summaryPlace(d))
		}
		if th.Rule == ThresholdWithin && th.TotalAfter.GreaterThan(thresholdLimit) {
			t.Fatalf("within but over: %s", thresholdLine(th))
		}
		if th.Counts && th.Rule != ThresholdCrossed && !th.Counted.Equal(netOf(g, d.RatePercent.Decimal())) {
			t.Fatalf("counted %s is not the value at the charged rate %s", th.Counted, d.RatePercent)
		}
	})
}

package vat

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Golden lines for the determinations that depend on more than one
// payment: the local day of supply, the seller's Art. 59c running totals,
// its registrations and the Art. 9a role. One line per case:
//
//	input at=UTC instant [extras] → summary day=supplyDate@timeZone [threshold] [supplier] | source
//
// TestGoldenDeterminations appends them to determinations.golden.

// contextCase is one golden case and the source of its rule.
type contextCase struct {
	in     Input
	source string
}

const (
	srcArt59c    = "Art. 59c(1)(c) and (2) Directive 2006/112/EC (https://datenbank.nwb.de/Dokument/452295_59c)"
	srcArt59c3   = "Art. 59c(3) Directive 2006/112/EC (option, two calendar years)"
	srcArt59cB   = "Art. 59c(1)(b) Directive 2006/112/EC: only supplies to non-taxable persons in another member state count"
	srcECB       = "USDC at par with USD, ECB reference rate USD per EUR of the day (fx/data/ecb-eurusd.csv, series EXR.D.USD.EUR.SP00.A)"
	srcLocalDay  = "Art. 63, 65 and 93 Directive 2006/112/EC (rate of the chargeable event), on the day in the taxing state's legal time (IANA tzdata " + tzdataRelease + ")"
	srcArt214a   = "Art. 213 and 214(1)(a) Directive 2006/112/EC"
	srcUnionOSS  = "Art. 369b and 369a(2) Directive 2006/112/EC, or Art. 214(1)(a) in the member state of consumption"
	srcNonUnion  = "Art. 359 and 358a Directive 2006/112/EC, or Art. 214(1)(a) in the member state of consumption"
	srcArt214e   = "Art. 214(1)(e) Directive 2006/112/EC"
	srcUKVRN     = "VATA 1994 s.3, s.4 and Sch. 1A (https://www.legislation.gov.uk/ukpga/1994/23/section/3; HMRC VATREG37150)"
	srcArt369a2  = "Art. 369a(2) Directive 2006/112/EC: the member state of identification is the state of establishment"
	srcArt358a1  = "Art. 358a(1) Directive 2006/112/EC: the non-Union scheme is for sellers neither established nor with a fixed establishment in the EU"
	srcArt9a     = "Art. 28 Directive 2006/112/EC; Art. 9a(1) Implementing Regulation (EU) No 282/2011 (https://datenbank.nwb.de/Dokument/495230_Article9a)"
	srcArt9aRebu = "Art. 9a(1) second and third subparagraphs Implementing Regulation (EU) No 282/2011"
)

func writeContextGolden(b *bytes.Buffer) {
	section := func(title string) { fmt.Fprintf(b, "\n# %s\n", title) }
	line := func(in Input, d Determination, source string) {
		fmt.Fprintf(b, "%s → %s | %s\n", describeContext(in), summaryContext(d), source)
	}
	run := func(cs []contextCase) {
		for _, c := range cs {
			line(c.in, Determine(c.in), c.source)
		}
	}

	section("Local day of supply: the issue's example (Estonia 22 % → 24 % on 2025-07-01, Europe/Tallinn = UTC+3).")
	for _, at := range []time.Time{utc(2025, time.June, 30, 20, 30), utc(2025, time.June, 30, 21, 30), utc(2025, time.June, 30, 21, 0)} {
		in := Input{Seller{Country: "US"}, b2c("EE"), Supply{Kind: KindDigitalService, Date: at}}
		line(in, Determine(in), srcLocalDay+"; EE 24 % from 2025-07-01: "+rateSourceOf("EE", "", seriesStandard, 20250701))
	}

	section("Local day: every rate change of 2024–2026 in the table, one minute before and after local midnight in the rate's own zone.")
	for _, c := range localMidnightCases() {
		d := Determine(c.in)
		line(c.in, d, srcLocalDay+"; "+rateSourceOf(c.key.country, c.key.territory, c.key.series, c.day))
	}

	section("Art. 59c threshold from the seller's totals: an Irish seller's three 6,000 USDC sales to German consumers, in append order.")
	for _, st := range threeSalesToGermany() {
		line(st.in, st.d, srcArt59c+"; "+srcECB)
	}

	section("Art. 59c: crossing on 31 December (Vienna) and the following January.")
	dec31 := Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), Supply{Kind: KindSaaS, Date: utc(2025, time.December, 31, 22, 59), GrossEUR: dec("1500")}}
	d31 := Determine(dec31)
	line(dec31, d31, srcArt59c+": the crossing supply is taxed at destination")
	for _, at := range []time.Time{utc(2025, time.December, 31, 23, 1), utc(2026, time.January, 15, 12, 0)} {
		in := Input{Seller{Country: "AT", CrossBorder: &CrossBorderTotals{PreviousYear: *d31.Threshold.TotalAfter}}, b2c("FR"), Supply{Kind: KindSaaS, Date: at, GrossEUR: dec("120")}}
		line(in, Determine(in), srcArt59c+": the preceding calendar year exceeded")
	}

	section("Art. 59c: opening figures, the boundary, the flags, supplies that do not count.")
	on := day(2026, time.March, 2)
	sup := func(gross string) Supply { return Supply{Kind: KindSaaS, Date: on, GrossEUR: dec(gross)} }
	run([]contextCase{
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "12000")}, b2c("DE"), sup("1190")}, srcArt59c + ": an opening figure already over this year"},
		{Input{Seller{Country: "IE", CrossBorder: totals("15000", "0")}, b2c("DE"), sup("1190")}, srcArt59c + ": an opening figure over for the preceding year"},
		{Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), sup("1200")}, srcArt59c + ": EUR 10,000.00 does not exceed EUR 10,000"},
		{Input{Seller{Country: "AT", CrossBorder: totals("0", "9000")}, b2c("FR"), sup("1200.012")}, srcArt59c + ": EUR 10,000.01 exceeds"},
		{Input{Seller{Country: "IE", OverThreshold: true, CrossBorder: totals("0", "0")}, b2c("DE"), sup("1190")}, srcArt59c + ": overThreshold states the threshold is already exceeded"},
		{Input{Seller{Country: "IE", OptedForDestination: true, CrossBorder: totals("0", "0")}, b2c("DE"), sup("1190")}, srcArt59c3},
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, b2c("IE"), sup("5000")}, srcArt59cB + " (domestic supply)"},
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}, sup("5000")}, srcArt59cB + " (business customer)"},
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "9999")}, Buyer{Country: "ES", PostalCode: "35001"}, sup("5000")}, srcArt59cB + "; Art. 5(2) and 6(1)(b): the Canary Islands are no member state territory"},
		{Input{Seller{Country: "US", CrossBorder: totals("0", "0")}, b2c("DE"), sup("1190")}, "Art. 59c(1)(a) Directive 2006/112/EC: no threshold for a seller established outside the EU"},
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "-1")}, b2c("DE"), sup("1190")}, "input check: a running total cannot be negative"},
		{Input{Seller{Country: "IE", CrossBorder: totals("0", "0")}, b2c("DE"), Supply{Kind: KindSaaS, Date: on}}, "input check: the EUR amount is needed to count the supply"},
	})

	section("Registrations: an outcome needing a registration the seller does not list is a review naming it.")
	over := func(s Seller) Seller { s.OverThreshold = true; return s }
	atB2B := Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}
	run([]contextCase{
		{Input{Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:IE")}, b2c("XI"), digital}, srcUKVRN + " (Northern Ireland consumer)"},
		{Input{Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:IE")}, b2c("GB"), digital}, srcUKVRN + " (Great Britain consumer)"},
		{Input{Seller{Country: "IE", Registrations: regs("national:IE", "uk_vrn:GB")}, b2c("XI"), digital}, srcUKVRN},
		{Input{over(Seller{Country: "IE", Registrations: regs("national:IE")}), b2c("DE"), digital}, srcUnionOSS + " (no OSS above the threshold)"},
		{Input{Seller{Country: "IE", CrossBorder: totals("10500", "0"), Registrations: regs("national:IE")}, b2c("DE"), Supply{Kind: KindSaaS, Date: on, GrossEUR: dec("1190")}}, srcUnionOSS + " (no OSS, previous year over)"},
		{Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:IE")}), b2c("DE"), digital}, srcUnionOSS},
		{Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "national:DE")}), b2c("DE"), digital}, srcUnionOSS},
		{Input{Seller{Country: "DE", Registrations: regs("oss_union:DE")}, b2c("FR"), digital}, srcArt214a + " (origin taxation in DE)"},
		{Input{Seller{Country: "DE", Registrations: regs()}, b2c("DE"), digital}, srcArt214a + " (stated: no registration)"},
		{Input{Seller{Country: "DE", OtherEstablishments: []string{"FR"}, Registrations: regs("national:DE", "oss_union:DE")}, b2c("FR"), digital}, srcArt214a + "; Art. 369b (fixed establishment in FR)"},
		{Input{Seller{Country: "US", Registrations: regs("national:FR")}, b2c("DE"), digital}, srcNonUnion},
		{Input{Seller{Country: "US", Registrations: regs("oss_non_union:NL")}, b2c("DE"), digital}, srcNonUnion},
		{Input{Seller{Country: "US", Registrations: regs("ioss:NL")}, b2c("DE"), digital}, srcNonUnion + "; the import scheme (Art. 369l) covers goods only"},
		{Input{Seller{Country: "DE", Registrations: regs("oss_union:DE")}, atB2B, digital}, srcArt214e},
		{Input{Seller{Country: "US", Registrations: regs()}, atB2B, digital}, "Art. 196 Directive 2006/112/EC: the customer is liable; no registration of a non-EU supplier needed"},
		{Input{Seller{Country: "DE", Registrations: regs()}, b2c("US"), digital}, "Art. 59 and 58 Directive 2006/112/EC: outside the EU, no EU registration needed"},
		{Input{Seller{Country: "GB", Registrations: regs()}, b2c("GB"), digital}, srcUKVRN},
		{Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:FR")}), b2c("DE"), digital}, srcArt369a2},
		{Input{Seller{Country: "US", Registrations: regs("oss_union:IE")}, b2c("DE"), digital}, "Art. 369a(2) second subparagraph Directive 2006/112/EC: a fixed establishment is needed"},
		{Input{Seller{Country: "US", OtherEstablishments: []string{"IE"}, Registrations: regs("oss_union:IE")}, b2c("DE"), digital}, "Art. 369a(2) second subparagraph Directive 2006/112/EC"},
		{Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_non_union:IE")}), b2c("DE"), digital}, srcArt358a1},
	})

	section("Electronic interfaces: the deemed supplier and the underlying provider.")
	market := Seller{Country: "IE", OverThreshold: true, ElectronicInterface: true}
	tool := func() *Provider { return &Provider{Name: "Weather Tools Inc.", Country: "US"} }
	rebutted := market
	rebutted.Art9aRebutted = true
	run([]contextCase{
		{Input{market, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, Provider: tool()}}, srcArt9a},
		{Input{market, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1}}, srcArt9a + ": the record names the underlying provider"},
		{Input{rebutted, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, Provider: tool()}}, srcArt9aRebu},
	})
}

// rateSourceOf cites the table row of a series in force on day.
func rateSourceOf(cc, terr, series string, day int) string {
	r, ok := rates.lookup(seriesKey{cc, terr, series}, day)
	if !ok || !rates.covers(day) {
		return "rate table " + rates.version + " does not cover " + keyTime(day).Format(time.DateOnly)
	}
	return rates.source(r).Source
}

// describeContext extends describe with the instant and the new inputs.
func describeContext(in Input) string {
	var b strings.Builder
	b.WriteString(describe(in))
	if !in.Supply.Date.IsZero() {
		fmt.Fprintf(&b, " at=%s", in.Supply.Date.UTC().Format("2006-01-02T15:04Z"))
	}
	s := in.Seller
	if cb := s.CrossBorder; cb != nil {
		fmt.Fprintf(&b, " totals=%s/%s", cb.PreviousYear, cb.CurrentYear)
	}
	if !in.Supply.GrossEUR.IsZero() {
		fmt.Fprintf(&b, " gross=%s", in.Supply.GrossEUR)
	}
	if s.Registrations != nil {
		fmt.Fprintf(&b, " regs=[%s]", listRegistrations(s.Registrations))
	}
	if s.ElectronicInterface {
		b.WriteString(" interface")
		if s.Art9aRebutted {
			b.WriteString(":rebutted")
		}
	}
	if p := in.Supply.Provider; p != nil {
		fmt.Fprintf(&b, " provider=%q", p.Name)
	}
	return b.String()
}

// summaryContext extends summary with the day of supply and the sections.
func summaryContext(d Determination) string {
	var b strings.Builder
	b.WriteString(summary(d))
	fmt.Fprintf(&b, " day=%s@%s", dashIfEmpty(d.SupplyDate), dashIfEmpty(d.TimeZone))
	if th := d.Threshold; th != nil {
		short := func(p *decimal.Decimal) string {
			if p == nil {
				return "-"
			}
			return p.StringFixed(2)
		}
		fmt.Fprintf(&b, " threshold=%s/%d/%s+%s=%s", dashIfEmpty(th.Rule), th.Year, th.TotalBefore.StringFixed(2), short(th.Counted), short(th.TotalAfter))
		if th.Crossed {
			b.WriteString("/crossed")
		}
		if !th.Counts {
			b.WriteString("/not-counted")
		}
	}
	if s := d.Supplier; s != nil {
		fmt.Fprintf(&b, " supplier=%s", s.Role)
		if s.UnderlyingProvider != nil {
			fmt.Fprintf(&b, "(provider %q)", s.UnderlyingProvider.Name)
		}
	}
	return b.String()
}

package vat

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Expectations of the manual-determination tests are computed from the
// public rate table (Rates().Standard, Rates().Reduced) or, for the
// series those do not expose (e-books, territories), from the generated
// rows, on the local day the package documentation defines; never from
// DetermineManually itself.

// stdRate is the standard rate of cc on the calendar day of at (UTC).
func stdRate(t *testing.T, cc string, at time.Time) string {
	t.Helper()
	r, _, err := Rates().Standard(cc, at)
	if err != nil {
		t.Fatal(err)
	}
	return r.String()
}

// seriesRate is the first rate of a series row (a territory's or a kind's)
// on the UTC calendar day of at, read from the generated rows.
func seriesRate(t *testing.T, cc, territory, series string, at time.Time) string {
	t.Helper()
	r, ok := rates.lookup(seriesKey{cc, territory, series}, dayKey(at))
	if !ok {
		t.Fatalf("no %s/%s/%s row on %s", cc, territory, series, at)
	}
	return r.percents[0].String()
}

// contradictory is location evidence whose items disagree: the customer's
// billing address in a, a third party's IP geolocation in b.
func contradictory(a, b string) []Evidence {
	return []Evidence{
		{Kind: EvidenceBillingAddress, Country: a, Source: EvidenceSourceCustomer, Value: "Street 1"},
		{Kind: EvidenceIPAddress, Country: b, Source: EvidenceSourceThirdParty, Provider: "GeoIP", Value: "198.51.100.7"},
	}
}

func manual(regime, cc, rate string) Manual {
	return Manual{Regime: regime, TaxingCountry: cc, RatePercent: rate, Reason: "Customer confirmed the place by e-mail of 2026-09-02.", DecidedBy: "reviewer-7"}
}

var counted = decimal.RequireFromString("120.00")

type manualAccept struct {
	name string
	in   Input
	m    Manual
	// want: regime/scheme category rate taxing pos ruleset treatment [codes]
	want string
	// check runs further assertions.
	check func(t *testing.T, d Determination)
}

// manualSummary renders the decisive fields of a manual determination.
func manualSummary(d Determination) string {
	s := summary(d)
	return s + " " + d.Ruleset + " " + d.RateKind
}

func acceptCases(t *testing.T) []manualAccept {
	eeLate := time.Date(2025, 6, 30, 21, 30, 0, 0, time.UTC) // 2025-07-01 00:30 in Tallinn
	azores := seriesRate(t, "PT", "Azores", seriesStandard, sep1)
	gbEbook := seriesRate(t, "GB", "", seriesEbook, sep1)
	czEbook := seriesRate(t, "CZ", "", seriesEbook, sep1)
	itEbook := seriesRate(t, "IT", "", seriesEbook, sep1)
	fiEbook := seriesRate(t, "FI", "", seriesEbook, sep1) // candidate, not confirmed by a source
	atStd := stdRate(t, "AT", sep1)
	std := func(cc string) string { return stdRate(t, cc, sep1) }
	kindOf := func(rate, cc string, at time.Time) string {
		switch s, _, _ := Rates().Standard(cc, at); {
		case decimal.RequireFromString(rate).IsZero():
			return RateKindZero
		case s.Equal(decimal.RequireFromString(rate)):
			return RateKindStandard
		}
		return RateKindReduced
	}
	frNumber := Buyer{Country: "FR", VATNumber: "FR40303265045", Registry: confirmed("VIES", "FR40303265045")}
	return []manualAccept{
		{"DOMESTIC, contradictory evidence settled at home",
			Input{Seller{Country: "DE"}, Buyer{Country: "DE", Evidence: contradictory("DE", "AT")}, digital},
			manual(RegimeDomestic, "de", std("DE")),
			fmt.Sprintf("DETERMINED DOMESTIC S %s DE pos=DE - B2C [manual_determination] %s %s", std("DE"), RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				if d.LocationEvidence.Rule != EvidenceRuleManual || d.LocationEvidence.Items[0].Agrees != true || d.LocationEvidence.Items[1].Agrees {
					t.Errorf("evidence assessment %+v", d.LocationEvidence)
				}
			}},
		{"DOMESTIC at origin, Art. 59c, one merchant item",
			Input{Seller{Country: "AT", CrossBorder: totals("2000", "3000")},
				Buyer{Country: "DE", Evidence: []Evidence{{Kind: EvidenceIPAddress, Country: "DE", Source: EvidenceSourceMerchant}}},
				Supply{Kind: KindDigitalService, Date: sep1, GrossEUR: counted}},
			manual(RegimeDomestic, "AT", atStd),
			fmt.Sprintf("DETERMINED DOMESTIC S %s AT pos=AT - B2C [manual_determination,origin_taxation_below_threshold] %s %s", atStd, RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				// Counted at the rate charged: gross / (1 + rate/100).
				net := counted.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(decimal.RequireFromString(atStd)), 10)
				th := d.Threshold
				if th == nil || th.Rule != ThresholdWithin || !th.Counts || th.Counted == nil || !th.Counted.Equal(net) || !th.TotalAfter.Equal(net.Add(decimal.NewFromInt(3000))) {
					t.Errorf("threshold %+v, want within, counted %s", th, net)
				}
				if d.TimeZone != "Europe/Vienna" {
					t.Errorf("time zone %s", d.TimeZone)
				}
			}},
		{"DOMESTIC in a fixed establishment's state for a business (Art. 192a)",
			Input{Seller{Country: "DE", OtherEstablishments: []string{"FR"}}, frNumber, digital},
			manual(RegimeDomestic, "FR", std("FR")),
			fmt.Sprintf("DETERMINED DOMESTIC S %s FR pos=FR - B2B [manual_determination,location_single_assertion,fixed_establishment_in_buyer_country] %s %s", std("FR"), RulesetEU, RateKindStandard),
			nil},
		{"DOMESTIC in the consumer's state, national registration instead of the OSS",
			Input{Seller{Country: "US", Registrations: []Registration{{Scheme: RegistrationNational, Country: "FR"}}}, Buyer{Country: "FR", VATNumber: "FR40303265045"}, digital},
			manual(RegimeDomestic, "FR", std("FR")),
			fmt.Sprintf("DETERMINED DOMESTIC S %s FR pos=FR - B2C [manual_determination,location_single_assertion,vat_number_unverified] %s %s", std("FR"), RulesetEU, RateKindStandard),
			nil},
		{"DOMESTIC FI for Åland, e-book rate not confirmed by a source",
			Input{Seller{Country: "FI"}, b2c("AX"), ebook},
			manual(RegimeDomestic, "FI", fiEbook),
			fmt.Sprintf("DETERMINED DOMESTIC S %s FI pos=AX - B2C [manual_determination,location_single_assertion] %s %s", fiEbook, RulesetEU, kindOf(fiEbook, "FI", sep1)),
			func(t *testing.T, d Determination) {
				if d.Territory != "Åland Islands" || !strings.Contains(d.LegalBasis, "1266/1996") {
					t.Errorf("territory %q basis %q", d.Territory, d.LegalBasis)
				}
			}},
		{"OSS_B2C union, contradictory evidence",
			Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "FR", Evidence: contradictory("FR", "BE")}, digital},
			manual(RegimeOSSB2C, "FR", std("FR")),
			fmt.Sprintf("DETERMINED OSS_B2C/union S %s FR pos=FR - B2C [manual_determination] %s %s", std("FR"), RulesetEU, RateKindStandard),
			nil},
		{"OSS_B2C non-union, the standard rate for an Italian e-book without ISBN",
			Input{Seller{Country: "US"}, b2c("IT"), ebook},
			manual(RegimeOSSB2C, "IT", std("IT")),
			fmt.Sprintf("DETERMINED OSS_B2C/non-union S %s IT pos=IT - B2C [manual_determination,location_single_assertion] %s %s", std("IT"), RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				if d.RateCondition != nil {
					t.Errorf("rate condition %+v on the standard rate", d.RateCondition)
				}
			}},
		{"OSS_B2C, the Italian e-book rate with the ISBN attested",
			Input{Seller{Country: "US"}, Buyer{Country: "IT", Evidence: contradictory("IT", "FR")}, Supply{Kind: KindEbook, Date: sep1, Conditions: []string{ConditionITISBNISSN}}},
			manual(RegimeOSSB2C, "IT", itEbook),
			fmt.Sprintf("DETERMINED OSS_B2C/non-union S %s IT pos=IT - B2C [manual_determination] %s %s", itEbook, RulesetEU, kindOf(itEbook, "IT", sep1)),
			func(t *testing.T, d Determination) {
				if d.RateCondition == nil || d.RateCondition.Code != ConditionITISBNISSN || !d.RateCondition.Attested {
					t.Errorf("rate condition %+v", d.RateCondition)
				}
			}},
		{"OSS_B2C, this supply crosses the Art. 59c threshold",
			Input{Seller{Country: "AT", CrossBorder: totals("2000", "9950")},
				Buyer{Country: "DE", Evidence: []Evidence{{Kind: EvidenceIPAddress, Country: "DE", Source: EvidenceSourceMerchant}}},
				Supply{Kind: KindDigitalService, Date: sep1, GrossEUR: counted}},
			manual(RegimeOSSB2C, "DE", std("DE")),
			fmt.Sprintf("DETERMINED OSS_B2C/union S %s DE pos=DE - B2C [manual_determination,threshold_exceeded_by_this_supply] %s %s", std("DE"), RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				if d.Threshold == nil || d.Threshold.Rule != ThresholdCrossed || !d.Threshold.Crossed {
					t.Errorf("threshold %+v", d.Threshold)
				}
			}},
		{"OSS_B2C in the Azores at the regional rate",
			Input{Seller{Country: "US"}, Buyer{Country: "PT", PostalCode: "9500-123", Evidence: contradictory("PT", "ES")}, digital},
			manual(RegimeOSSB2C, "PT", azores),
			fmt.Sprintf("DETERMINED OSS_B2C/non-union S %s PT pos=PT-20 - B2C [manual_determination] %s %s", azores, RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				if d.TimeZone != "Atlantic/Azores" || d.Territory != "Azores" {
					t.Errorf("zone %q territory %q", d.TimeZone, d.Territory)
				}
			}},
		{"OSS_B2C, Estonian rate on the local day (24 % from 2025-07-01 in Tallinn)",
			Input{Seller{Country: "US"}, Buyer{Country: "EE", Evidence: contradictory("EE", "LV")}, Supply{Kind: KindSaaS, Date: eeLate}},
			manual(RegimeOSSB2C, "EE", stdRate(t, "EE", eeLate.Add(3*time.Hour))),
			fmt.Sprintf("DETERMINED OSS_B2C/non-union S %s EE pos=EE - B2C [manual_determination] %s %s", stdRate(t, "EE", eeLate.Add(3*time.Hour)), RulesetEU, RateKindStandard),
			func(t *testing.T, d Determination) {
				if d.SupplyDate != "2025-07-01" || d.TimeZone != "Europe/Tallinn" {
					t.Errorf("day %s zone %s", d.SupplyDate, d.TimeZone)
				}
			}},
		{"OSS_B2C, zero-rated Czech e-book is Z",
			Input{Seller{Country: "US"}, Buyer{Country: "CZ", Evidence: contradictory("CZ", "SK")}, ebook},
			manual(RegimeOSSB2C, "CZ", czEbook),
			fmt.Sprintf("DETERMINED OSS_B2C/non-union Z %s CZ pos=CZ - B2C [manual_determination] %s %s", czEbook, RulesetEU, RateKindZero),
			nil},
		{"REVERSE_CHARGE_B2B, the fixed establishment does not intervene",
			Input{Seller{Country: "DE", OtherEstablishments: []string{"AT"}}, Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}, digital},
			manual(RegimeReverseChargeB2B, "AT", ""),
			fmt.Sprintf("DETERMINED REVERSE_CHARGE_B2B AE 0 AT pos=AT VATEX-EU-AE B2B [manual_determination,location_single_assertion,fixed_establishment_in_buyer_country] %s ", RulesetEU),
			func(t *testing.T, d Determination) {
				if d.InvoiceNote != "Reverse charge" || d.SupplyDate != "2026-09-01" || d.TimeZone != "Europe/Vienna" {
					t.Errorf("note %q day %s %s", d.InvoiceNote, d.SupplyDate, d.TimeZone)
				}
			}},
		{"REVERSE_CHARGE_B2B where the number's state differs from the attested country",
			Input{Seller{Country: "DE"}, Buyer{Country: "NL", VATNumber: "FR40303265045", Registry: confirmed("VIES", "FR40303265045")}, digital},
			manual(RegimeReverseChargeB2B, "FR", ""),
			fmt.Sprintf("DETERMINED REVERSE_CHARGE_B2B AE 0 FR pos=FR VATEX-EU-AE B2B [manual_determination] %s ", RulesetEU),
			func(t *testing.T, d Determination) {
				ev := d.LocationEvidence
				if ev.Rule != EvidenceRuleManual || ev.Country != "FR" || len(ev.Items) != 1 || ev.Items[0].Agrees {
					t.Errorf("evidence %+v", ev)
				}
			}},
		{"OUTSIDE_SCOPE, the account chose review for the Canary Islands",
			Input{Seller{Country: "DE", ReviewSpecialTerritories: true}, Buyer{Country: "ES", PostalCode: "35001"}, digital},
			manual(RegimeOutsideScope, "", ""),
			fmt.Sprintf("DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [manual_determination,location_single_assertion,local_tax_not_assessed] %s ", RulesetEU),
			func(t *testing.T, d Determination) {
				if d.LocalTax == nil || !strings.HasPrefix(d.LocalTax.Name, "IGIC") || d.TimeZone != "Europe/Berlin" {
					t.Errorf("local tax %+v zone %s", d.LocalTax, d.TimeZone)
				}
			}},
		{"OUTSIDE_SCOPE by a UK seller, UK ruleset",
			Input{Seller{Country: "GB"}, Buyer{Country: "US", Evidence: contradictory("US", "DE")}, digital},
			manual(RegimeOutsideScope, "", ""),
			fmt.Sprintf("DETERMINED OUTSIDE_SCOPE O - - pos=US VATEX-EU-O B2C [manual_determination,ruleset_experimental,local_tax_not_assessed] %s ", RulesetUK),
			nil},
		{"UK_DOMESTIC, contradictory evidence",
			Input{Seller{Country: "GB"}, Buyer{Country: "GB", Evidence: contradictory("GB", "FR")}, digital},
			manual(RegimeUKDomestic, "UK", std("GB")),
			fmt.Sprintf("DETERMINED UK_DOMESTIC S %s GB pos=GB - B2C [manual_determination,ruleset_experimental] %s %s", std("GB"), RulesetUK, RateKindStandard),
			nil},
		{"UK_B2C, zero-rated e-book",
			Input{Seller{Country: "US"}, Buyer{Country: "GB", Evidence: contradictory("GB", "IE")}, ebook},
			manual(RegimeUKB2C, "GB", gbEbook),
			fmt.Sprintf("DETERMINED UK_B2C Z %s GB pos=GB - B2C [manual_determination,ruleset_experimental] %s %s", gbEbook, RulesetUK, RateKindZero),
			func(t *testing.T, d Determination) {
				if !strings.Contains(d.LegalBasis, "Sch. 8 Group 3") {
					t.Errorf("basis %q", d.LegalBasis)
				}
			}},
		{"UK_REVERSE_CHARGE, contradictory evidence",
			Input{Seller{Country: "US"}, Buyer{Country: "GB", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684"), Evidence: contradictory("GB", "FR")}, digital},
			manual(RegimeUKReverseCharge, "GB", ""),
			fmt.Sprintf("DETERMINED UK_REVERSE_CHARGE AE 0 GB pos=GB - B2B [manual_determination,ruleset_experimental] %s ", RulesetUK),
			nil},
	}
}

func TestDetermineManuallyAccepts(t *testing.T) {
	for _, c := range acceptCases(t) {
		t.Run(c.name, func(t *testing.T) {
			d, err := DetermineManually(c.in, c.m)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := manualSummary(d); got != c.want {
				t.Errorf("\n got  %s\n want %s", got, c.want)
				for _, r := range d.Reasons {
					t.Logf("  %s: %s", r.Code, r.Detail)
				}
			}
			checkManual(t, c.in, c.m, d, nil)
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
}

type manualRefuse struct {
	name              string
	in                Input
	m                 Manual
	code, field, fact string
	detail            []string // substrings the detail must hold
}

func refuseCases(t *testing.T) []manualRefuse {
	std := func(cc string) string { return stdRate(t, cc, sep1) }
	frReduced, _, err := Rates().Reduced("FR", sep1)
	if err != nil {
		t.Fatal(err)
	}
	var frAllowed []string
	for _, p := range frReduced {
		frAllowed = append(frAllowed, p.String()+" %")
	}
	eeLate := time.Date(2025, 6, 30, 21, 30, 0, 0, time.UTC)
	eeUTCDay := stdRate(t, "EE", eeLate) // the rate of the UTC day, 2025-06-30: not in force in Tallinn
	deFR := Input{Seller{Country: "DE", OverThreshold: true}, b2c("FR"), digital}
	withReason := func(m Manual, reason, by string) Manual { m.Reason, m.DecidedBy = reason, by; return m }
	confirmedFR := Buyer{Country: "FR", VATNumber: "FR40303265045", Registry: confirmed("VIES", "FR40303265045")}
	return []manualRefuse{
		{"unknown regime", deFR, manual("VAT_FREE", "FR", ""), ManualRegimeUnknown, fieldRegime, "", []string{"OSS_B2C", "UK_REVERSE_CHARGE"}},
		{"empty reason", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), " \t", "reviewer-7"), ManualTextInvalid, fieldReason, "", []string{"missing"}},
		{"reason too long", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), strings.Repeat("é", MaxManualReasonLength+1), "reviewer-7"), ManualTextInvalid, fieldReason, "", []string{fmt.Sprint(MaxManualReasonLength)}},
		{"reason with a line break", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), "first\nsecond", "reviewer-7"), ManualTextInvalid, fieldReason, "", []string{"U+000A"}},
		{"reason with a bidi override", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), "ok \u202e kO", "reviewer-7"), ManualTextInvalid, fieldReason, "", []string{"U+202E"}},
		{"reason not UTF-8", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), "bad \xff", "reviewer-7"), ManualTextInvalid, fieldReason, "", []string{"UTF-8"}},
		{"no person", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), "Because.", ""), ManualTextInvalid, fieldDecidedBy, "", []string{"missing"}},
		{"person too long", deFR, withReason(manual(RegimeOSSB2C, "FR", std("FR")), "Because.", strings.Repeat("x", MaxManualDecidedByLength+1)), ManualTextInvalid, fieldDecidedBy, "", []string{fmt.Sprint(MaxManualDecidedByLength)}},
		{"taxing country missing", deFR, manual(RegimeDomestic, "", std("DE")), ManualCountryInvalid, fieldTaxingCountry, "", []string{"missing"}},
		{"taxing country unknown", deFR, manual(RegimeOSSB2C, "ZZ", "20"), ManualCountryInvalid, fieldTaxingCountry, "", []string{"ISO 3166-1"}},
		{"taxing country outside the EU", deFR, manual(RegimeOSSB2C, "CH", "8.1"), ManualCountryInvalid, fieldTaxingCountry, "", []string{"not an EU member state", "Art. 5"}},
		{"taxing country GB under an EU regime", deFR, manual(RegimeDomestic, "GB", "20"), ManualCountryInvalid, fieldTaxingCountry, "", []string{"not an EU member state"}},
		{"taxing country a territory code", deFR, manual(RegimeOSSB2C, "IC", "7"), ManualCountryInvalid, fieldTaxingCountry, "", []string{"territory"}},
		{"UK regime taxed in France", Input{Seller{Country: "US"}, b2c("GB"), digital}, manual(RegimeUKB2C, "FR", "20"), ManualCountryInvalid, fieldTaxingCountry, "", []string{"not GB"}},
		{"outside scope with a taxing country", Input{Seller{Country: "DE"}, b2c("US"), digital}, manual(RegimeOutsideScope, "US", ""), ManualCountryInvalid, fieldTaxingCountry, "", []string{"outside the scope"}},
		{"rate missing where VAT is charged", deFR, manual(RegimeOSSB2C, "FR", ""), ManualRateInvalid, fieldRatePercent, "", []string{"missing"}},
		{"rate given for reverse charge", Input{Seller{Country: "DE"}, confirmedFR, digital}, manual(RegimeReverseChargeB2B, "FR", "0"), ManualRateInvalid, fieldRatePercent, "", []string{"BR-AE-05"}},
		{"rate given outside scope", Input{Seller{Country: "DE"}, b2c("US"), digital}, manual(RegimeOutsideScope, "", "0"), ManualRateInvalid, fieldRatePercent, "", []string{"BR-O-05"}},
		{"rate not a number", deFR, manual(RegimeOSSB2C, "FR", "twenty"), ManualRateInvalid, fieldRatePercent, "", []string{"not a decimal"}},
		// The rate in force, spelled other than as a plain decimal string:
		// refused as an amount would be, whatever its value.
		{"rate with an exponent", deFR, manual(RegimeOSSB2C, "FR", std("FR")+"e0"), ManualRateInvalid, fieldRatePercent, "", []string{"plain decimal"}},
		{"rate with a leading zero", deFR, manual(RegimeOSSB2C, "FR", "0"+std("FR")), ManualRateInvalid, fieldRatePercent, "", []string{"plain decimal"}},
		{"rate with a sign", deFR, manual(RegimeOSSB2C, "FR", "+"+std("FR")), ManualRateInvalid, fieldRatePercent, "", []string{"plain decimal"}},
		{"rate ending in a point", deFR, manual(RegimeOSSB2C, "FR", std("FR")+"."), ManualRateInvalid, fieldRatePercent, "", []string{"plain decimal"}},
		{"rate above 100", deFR, manual(RegimeOSSB2C, "FR", "120"), ManualRateInvalid, fieldRatePercent, "", []string{"between 0 and 100"}},
		{"rate not in force", deFR, manual(RegimeOSSB2C, "FR", "19"), ManualRateNotInForce, fieldRatePercent, "", append([]string{std("FR") + " % (standard)", "2026-09-01", "Europe/Paris"}, frAllowed...)},
		{"rate of the UTC day, not the local day", Input{Seller{Country: "US"}, b2c("EE"), Supply{Kind: KindSaaS, Date: eeLate}}, manual(RegimeOSSB2C, "EE", eeUTCDay), ManualRateNotInForce, fieldRatePercent, "", []string{"2025-07-01", "Europe/Tallinn"}},
		{"mainland rate in the Azores", Input{Seller{Country: "US"}, Buyer{Country: "PT", PostalCode: "9500-123"}, digital}, manual(RegimeOSSB2C, "PT", std("PT")), ManualRateNotInForce, fieldRatePercent, "", []string{"Azores (PT)"}},
		{"UK zero rate for SaaS", Input{Seller{Country: "US"}, b2c("GB"), digital}, manual(RegimeUKB2C, "GB", "0"), ManualRateNotInForce, fieldRatePercent, "", []string{"20 % (standard)", "5 % (reduced)"}},
		{"Italian e-book rate without the ISBN attested", Input{Seller{Country: "US"}, b2c("IT"), ebook}, manual(RegimeOSSB2C, "IT", seriesRate(t, "IT", "", seriesEbook, sep1)), ReasonRateConditionUnattested, fieldRatePercent, "supply.conditions", []string{ConditionITISBNISSN}},
		{"OSS for a confirmed business", Input{Seller{Country: "DE", OverThreshold: true}, confirmedFR, digital}, manual(RegimeOSSB2C, "FR", std("FR")), ManualContradictsFacts, fieldRegime, "buyer.registry", []string{"taxable person", "Art. 44 and 196"}},
		{"OSS in the seller's own state", Input{Seller{Country: "DE", OverThreshold: true}, b2c("DE"), digital}, manual(RegimeOSSB2C, "DE", std("DE")), ManualContradictsLaw, fieldTaxingCountry, "seller.country", []string{"Art. 369a point 1 and Art. 369b"}},
		{"OSS in a fixed establishment's state", Input{Seller{Country: "DE", OtherEstablishments: []string{"FR"}}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ManualContradictsLaw, fieldTaxingCountry, "seller.otherEstablishments", []string{"fixed establishment", "Art. 369b"}},
		{"OSS for a seller without a country", Input{Seller{}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonSellerCountryMissing, fieldDetermination, "seller.country", nil},
		{"OSS for a seller with an unknown country", Input{Seller{Country: "XX"}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonSellerCountryUnknown, fieldDetermination, "seller.country", nil},
		{"OSS within the threshold by the account's flags", Input{Seller{Country: "DE"}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ManualContradictsLaw, fieldRegime, "seller.overThreshold", []string{"Art. 59c(1)", "DOMESTIC DE"}},
		{"OSS within the threshold by the totals", Input{Seller{Country: "DE", CrossBorder: totals("100", "200")}, b2c("FR"), Supply{Kind: KindSaaS, Date: sep1, GrossEUR: counted}}, manual(RegimeOSSB2C, "FR", std("FR")), ManualContradictsLaw, fieldRegime, "seller.crossBorder", []string{"stay within EUR 10,000"}},
		{"OSS without a registration the outcome needs", Input{Seller{Country: "DE", OverThreshold: true, Registrations: []Registration{{Scheme: RegistrationNational, Country: "DE"}}}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonSellerNotRegistered, fieldRegime, "seller.registrations", []string{"Union OSS"}},
		{"OSS with no fact placing the customer", Input{Seller{Country: "US"}, Buyer{}, digital}, manual(RegimeOSSB2C, "FR", std("FR")), ManualFactMissing, fieldTaxingCountry, "buyer.country", []string{"supply it first"}},
		{"OSS where the facts place the customer elsewhere", Input{Seller{Country: "US"}, Buyer{Country: "DE", Evidence: contradictory("DE", "AT")}, digital}, manual(RegimeOSSB2C, "FR", std("FR")), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"buyer.evidence[1]=AT"}},
		{"OSS in the Canary Islands", Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "ES", PostalCode: "35001"}, digital}, manual(RegimeOSSB2C, "ES", std("ES")), ManualContradictsLaw, fieldTaxingCountry, "buyer.country", []string{"Canary Islands", "OUTSIDE_SCOPE"}},
		{"facts naming two territories of a state", Input{Seller{Country: "US"}, Buyer{Country: "ES", PostalCode: "35001", Evidence: []Evidence{{Kind: EvidenceIPAddress, Country: "EA", Source: EvidenceSourceThirdParty}}}, digital}, manual(RegimeOSSB2C, "ES", std("ES")), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"disagree"}},
		{"reverse charge without a VAT number", Input{Seller{Country: "DE"}, Buyer{Country: "FR", Business: true}, digital}, manual(RegimeReverseChargeB2B, "FR", ""), ManualFactMissing, fieldRegime, "buyer.vatNumber", []string{"Art. 226(4)"}},
		{"reverse charge for a consumer", Input{Seller{Country: "DE"}, b2c("FR"), digital}, manual(RegimeReverseChargeB2B, "FR", ""), ManualContradictsFacts, fieldRegime, "buyer.business", []string{"consumer"}},
		{"reverse charge in the seller's state", Input{Seller{Country: "FR"}, confirmedFR, digital}, manual(RegimeReverseChargeB2B, "FR", ""), ManualContradictsLaw, fieldTaxingCountry, "seller.country", []string{"Art. 196", "DOMESTIC FR"}},
		{"reverse charge with an unchecked number", Input{Seller{Country: "DE"}, Buyer{Country: "FR", VATNumber: "FR40303265045"}, digital}, manual(RegimeReverseChargeB2B, "FR", ""), ReasonVATNumberUnverified, fieldRegime, "buyer.registry", []string{"Art. 18(1)"}},
		{"reverse charge with a number the registry refused", Input{Seller{Country: "DE"}, Buyer{Country: "FR", VATNumber: "FR40303265045", Registry: &RegistryCheck{Status: RegistryInvalid, Registry: RegistryVIES}}, digital}, manual(RegimeReverseChargeB2B, "FR", ""), ReasonVATNumberInvalid, fieldRegime, "buyer.vatNumber", []string{"invalid"}},
		{"reverse charge in another state than the number's", Input{Seller{Country: "DE"}, confirmedFR, digital}, manual(RegimeReverseChargeB2B, "BE", ""), ReasonVATNumberCountryMismatch, fieldRegime, "buyer.vatNumber", []string{"issued by FR"}},
		{"DOMESTIC in a business customer's state where the seller is not established", Input{Seller{Country: "US"}, confirmedFR, digital}, manual(RegimeDomestic, "FR", std("FR")), ManualContradictsFacts, fieldRegime, "buyer.registry", []string{"REVERSE_CHARGE_B2B FR"}},
		{"DOMESTIC in an unrelated state", deFR, manual(RegimeDomestic, "IT", std("IT")), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"neither the seller's member state"}},
		{"DOMESTIC for a customer outside the EU", Input{Seller{Country: "DE"}, b2c("US"), digital}, manual(RegimeDomestic, "DE", std("DE")), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"outside the EU VAT territory"}},
		{"DOMESTIC at origin although over the threshold", deFR, manual(RegimeDomestic, "DE", std("DE")), ManualContradictsLaw, fieldTaxingCountry, "seller.overThreshold", []string{"OSS_B2C FR"}},
		{"DOMESTIC at origin for a seller established twice", Input{Seller{Country: "DE", OtherEstablishments: []string{"AT"}}, b2c("FR"), digital}, manual(RegimeDomestic, "DE", std("DE")), ManualContradictsLaw, fieldTaxingCountry, "seller.otherEstablishments", []string{"Art. 59c(1)(a)"}},
		{"DOMESTIC at origin for a business", Input{Seller{Country: "DE"}, confirmedFR, digital}, manual(RegimeDomestic, "DE", std("DE")), ManualContradictsFacts, fieldRegime, "buyer.registry", []string{"taxable person"}},
		{"DOMESTIC at origin when this supply crosses the threshold", Input{Seller{Country: "AT", CrossBorder: totals("0", "9950")}, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, GrossEUR: counted}}, manual(RegimeDomestic, "AT", stdRate(t, "AT", sep1)), ManualContradictsLaw, fieldTaxingCountry, "seller.crossBorder", []string{"Art. 59c(2)"}},
		{"DOMESTIC at origin without the amount to count", Input{Seller{Country: "AT", CrossBorder: totals("0", "100")}, b2c("DE"), digital}, manual(RegimeDomestic, "AT", stdRate(t, "AT", sep1)), ReasonThresholdInputInvalid, fieldRegime, "supply.grossEUR", []string{"GrossEUR"}},
		{"DOMESTIC in a fixed establishment's state, customer elsewhere", Input{Seller{Country: "DE", OtherEstablishments: []string{"FR"}}, b2c("IT"), digital}, manual(RegimeDomestic, "FR", std("FR")), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"fixed establishment in FR"}},
		{"DOMESTIC in a territory outside the EU VAT area", Input{Seller{Country: "DE"}, Buyer{Country: "DE", PostalCode: "27498"}, digital}, manual(RegimeDomestic, "DE", std("DE")), ManualContradictsLaw, fieldTaxingCountry, "buyer.country", []string{"Heligoland"}},
		{"OUTSIDE_SCOPE where neither ruleset governs", Input{Seller{Country: "US"}, b2c("US"), digital}, manual(RegimeOutsideScope, "", ""), ReasonCorridorNotCovered, fieldRegime, "seller.country", []string{"does not record such a supply"}},
		{"OUTSIDE_SCOPE for a customer in the EU", Input{Seller{Country: "DE"}, b2c("FR"), digital}, manual(RegimeOutsideScope, "", ""), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"buyer.country=FR"}},
		{"OUTSIDE_SCOPE for Åland by a Finnish seller", Input{Seller{Country: "FI"}, b2c("AX"), digital}, manual(RegimeOutsideScope, "", ""), ManualContradictsLaw, fieldRegime, "buyer.country", []string{"DOMESTIC FI"}},
		{"OUTSIDE_SCOPE for Guadeloupe by a French seller", Input{Seller{Country: "FR"}, b2c("GP"), digital}, manual(RegimeOutsideScope, "", ""), ManualContradictsLaw, fieldRegime, "buyer.country", []string{"DOM rates"}},
		{"OUTSIDE_SCOPE with outside facts that disagree", Input{Seller{Country: "DE"}, Buyer{Country: "US", Evidence: contradictory("US", "CA")}, digital}, manual(RegimeOutsideScope, "", ""), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"disagree"}},
		{"UK_DOMESTIC for a non-UK seller", Input{Seller{Country: "US"}, b2c("GB"), digital}, manual(RegimeUKDomestic, "GB", "20"), ManualContradictsFacts, fieldRegime, "seller.country", []string{"VATA 1994 s.9"}},
		{"UK_B2C for a UK seller", Input{Seller{Country: "GB"}, b2c("GB"), digital}, manual(RegimeUKB2C, "GB", "20"), ManualContradictsFacts, fieldRegime, "seller.country", []string{"UK_DOMESTIC"}},
		{"UK_REVERSE_CHARGE for a consumer", Input{Seller{Country: "US"}, b2c("GB"), digital}, manual(RegimeUKReverseCharge, "GB", ""), ManualContradictsFacts, fieldRegime, "buyer.business", []string{"consumer", "VATA 1994 s.8"}},
		{"UK_B2C for an HMRC-confirmed business", Input{Seller{Country: "US"}, Buyer{Country: "GB", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684")}, digital}, manual(RegimeUKB2C, "GB", "20"), ManualContradictsFacts, fieldRegime, "buyer.registry", []string{"VATA 1994 s.8"}},
		{"UK_REVERSE_CHARGE with a number HMRC could not confirm", Input{Seller{Country: "US"}, Buyer{Country: "GB", VATNumber: "GB980780684", Registry: &RegistryCheck{Status: RegistryUnavailable, Registry: RegistryHMRC}}, digital}, manual(RegimeUKReverseCharge, "GB", ""), ReasonVATNumberUnverified, fieldRegime, "buyer.registry", []string{"VATA 1994 s.8"}},
		{"UK_B2C for a customer in France", Input{Seller{Country: "US"}, b2c("FR"), digital}, manual(RegimeUKB2C, "GB", "20"), ManualContradictsFacts, fieldTaxingCountry, "buyer.country", []string{"in the UK VAT area"}},
		{"supply date missing", Input{Seller{Country: "US"}, b2c("FR"), Supply{Kind: KindSaaS}}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonSupplyDateMissing, fieldDetermination, "supply.date", nil},
		{"supply date outside the table", Input{Seller{Country: "US"}, b2c("FR"), Supply{Kind: KindSaaS, Date: day(2030, 1, 1)}}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonDateOutsideRateTable, fieldDetermination, "supply.date", nil},
		{"reverse charge dated outside the table", Input{Seller{Country: "DE"}, confirmedFR, Supply{Kind: KindSaaS, Date: day(2030, 1, 1)}}, manual(RegimeReverseChargeB2B, "FR", ""), ReasonDateOutsideRateTable, fieldDetermination, "supply.date", nil},
		{"supply kind not covered", Input{Seller{Country: "US"}, b2c("FR"), Supply{Kind: "consulting", Date: sep1}}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonSupplyKindNotCovered, fieldDetermination, "supply.kind", []string{"correct the supply kind"}},
		{"Art. 9a presumption rebutted", Input{Seller{Country: "US", ElectronicInterface: true, Art9aRebutted: true}, b2c("FR"), Supply{Kind: KindSaaS, Date: sep1, Provider: &Provider{Name: "Tool Ltd"}}}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonUnderlyingProviderIsSupplier, fieldDetermination, "seller.art9aRebutted", []string{"Art. 9a(1)"}},
		{"electronic interface without the provider", Input{Seller{Country: "US", ElectronicInterface: true}, b2c("FR"), digital}, manual(RegimeOSSB2C, "FR", std("FR")), ReasonUnderlyingProviderMissing, fieldDetermination, "supply.provider", nil},
	}
}

func TestDetermineManuallyRefuses(t *testing.T) {
	for _, c := range refuseCases(t) {
		t.Run(c.name, func(t *testing.T) {
			d, err := DetermineManually(c.in, c.m)
			if err == nil {
				t.Fatalf("accepted: %s", manualSummary(d))
			}
			var me *ManualError
			if !errors.As(err, &me) || !errors.Is(err, ErrManualRefused) {
				t.Fatalf("error %T %v is not a *ManualError wrapping ErrManualRefused", err, err)
			}
			if me.Code != c.code || me.Field != c.field || me.Fact != c.fact {
				t.Errorf("got code=%s field=%s fact=%s\nwant code=%s field=%s fact=%s\n%s", me.Code, me.Field, me.Fact, c.code, c.field, c.fact, me.Detail)
			}
			for _, s := range c.detail {
				if !strings.Contains(me.Detail, s) {
					t.Errorf("detail lacks %q:\n%s", s, me.Detail)
				}
			}
			if d.Status != "" || d.Regime != "" {
				t.Errorf("a refusal returned a determination: %s", summary(d))
			}
		})
	}
}

// TestManualRefusalCoversEveryCode: every refusal code is exercised.
func TestManualRefusalCoversEveryCode(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range refuseCases(t) {
		seen[c.code] = true
	}
	for _, code := range []string{ManualRegimeUnknown, ManualTextInvalid, ManualCountryInvalid, ManualRateInvalid, ManualRateNotInForce, ManualContradictsFacts, ManualContradictsLaw, ManualFactMissing} {
		if !seen[code] {
			t.Errorf("no refusal case for %s", code)
		}
	}
	for _, r := range manualRegimes {
		accepted := false
		for _, c := range acceptCases(t) {
			accepted = accepted || c.m.Regime == r
		}
		if !accepted {
			t.Errorf("no accepted case for %s", r)
		}
	}
}

// checkManual asserts what holds for every manual determination: a
// refusal is a *ManualError naming a field under /determination; an
// accepted one obeys Determine's invariants and records the person's
// choice, the day of supply in its zone and a rate the table has there.
func checkManual(t *testing.T, in Input, m Manual, d Determination, err error) {
	t.Helper()
	if err != nil {
		var me *ManualError
		if !errors.As(err, &me) || !errors.Is(err, ErrManualRefused) || me.Code == "" || me.Detail == "" || !strings.HasPrefix(me.Field, fieldDetermination) {
			t.Errorf("%s %+v: bad refusal %#v", describe(in), m, err)
		}
		return
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s %+v: %s\n%s", describe(in), m, fmt.Sprintf(format, args...), summary(d))
	}
	checkInvariants(t, in, d)
	checkNewInvariants(t, in, d)
	if !d.Determined() || d.Regime != strings.TrimSpace(m.Regime) || d.TaxingCountry != normalizeCountry(m.TaxingCountry) {
		fail("not the person's regime and country")
	}
	if r := d.Reasons[0]; r.Code != ReasonManualDetermination || !strings.Contains(r.Detail, fmt.Sprintf("%q", strings.TrimSpace(m.Reason))) || !strings.Contains(r.Detail, fmt.Sprintf("%q", strings.TrimSpace(m.DecidedBy))) {
		fail("first reason %+v does not quote the person and the reason", r)
	}
	if strings.Contains(d.LegalBasis, strings.TrimSpace(m.Reason)) && len(strings.TrimSpace(m.Reason)) > 12 {
		fail("the legal basis carries the person's words")
	}
	if utf8.RuneCountInString(strings.TrimSpace(m.Reason)) > MaxManualReasonLength {
		fail("an over-long reason was accepted")
	}
	// The day of supply: Supply.Date's calendar day in the zone recorded.
	z, ok := zones[d.TimeZone]
	if !ok || d.SupplyDate != in.Supply.Date.In(z.loc).Format(time.DateOnly) {
		fail("supply date %s in %q", d.SupplyDate, d.TimeZone)
	}
	if !d.ChargesVAT() {
		if strings.TrimSpace(m.RatePercent) != "" {
			fail("a rate was given where none is charged")
		}
		return
	}
	want, err2 := decimal.NewFromString(strings.TrimSpace(m.RatePercent))
	if err2 != nil || !d.RatePercent.Decimal().Equal(want) {
		fail("rate %s, the person gave %q", d.RatePercent, m.RatePercent)
	}
	// The rate is one the table has for the place and day (a territory
	// with own rates by its name).
	cc, tn := d.TaxingCountry, ""
	for _, name := range []string{"Azores", "Madeira", "Jungholz", "Mittelberg"} {
		if d.Territory == name {
			tn = name
		}
	}
	dayOf, _ := time.Parse(time.DateOnly, d.SupplyDate)
	var have []decimal.Decimal
	for _, series := range []string{seriesStandard, seriesReduced, kindSeries[in.Supply.Kind]} {
		if row, ok := rates.lookup(seriesKey{cc, tn, series}, dayKey(dayOf)); ok {
			have = append(have, row.percents...)
		}
	}
	if !slices.ContainsFunc(have, want.Equal) {
		fail("rate %s is not in the table for %s/%s on %s (%v)", want, cc, tn, d.SupplyDate, have)
	}
}

// manualInputs: the golden inputs and the cases above.
func manualInputs(t *testing.T) []Input {
	ins := allCases()
	for _, c := range acceptCases(t) {
		ins = append(ins, c.in)
	}
	for _, c := range refuseCases(t) {
		ins = append(ins, c.in)
	}
	return ins
}

// TestManualProperties tries every regime with every taxing country the
// facts suggest and every rate the table has there on every input: each
// answer is a clean refusal or a determination that satisfies
// checkManual.
func TestManualProperties(t *testing.T) {
	accepted, refused := 0, 0
	for _, in := range manualInputs(t) {
		countries := []string{"", "FR", "GB", normalizeCountry(in.Seller.Country), normalizeCountry(in.Buyer.Country)}
		countries = append(countries, in.Seller.OtherEstablishments...)
		for _, e := range in.Buyer.Evidence {
			countries = append(countries, e.Country)
		}
		if n := NormalizeNumber(in.Buyer.VATNumber); len(n) >= 2 {
			countries = append(countries, numberPrefixCountry(n[:2]))
		}
		slices.Sort(countries)
		countries = slices.Compact(countries)
		for _, regime := range manualRegimes {
			for _, cc := range countries {
				rts := []string{"", "0", "17"}
				if !in.Supply.Date.IsZero() {
					for _, series := range []string{seriesStandard, seriesReduced, seriesEbook, seriesEpublication} {
						for _, terr := range []string{"", "Azores", "Jungholz"} {
							if row, ok := rates.lookup(seriesKey{tableCountry(normalizeCountry(cc)), terr, series}, dayKey(in.Supply.Date)); ok {
								for _, p := range row.percents {
									rts = append(rts, p.String())
								}
							}
						}
					}
				}
				slices.Sort(rts)
				for _, rt := range slices.Compact(rts) {
					m := manual(regime, cc, rt)
					d, err := DetermineManually(in, m)
					checkManual(t, in, m, d, err)
					if err == nil {
						accepted++
					} else {
						refused++
					}
				}
			}
		}
	}
	t.Logf("%d accepted, %d refused", accepted, refused)
	if accepted < 200 || refused < 1000 {
		t.Errorf("the property ran on too few cases: %d accepted, %d refused", accepted, refused)
	}
}

// TestManualDoesNotModifyInput: the input's slices and pointers are read only.
func TestManualDoesNotModifyInput(t *testing.T) {
	reg := confirmed("VIES", "ATU13585627")
	est := []string{"at"}
	ev := contradictory("at", "de")
	in := Input{Seller{Country: "de", OtherEstablishments: est}, Buyer{Country: "at", VATNumber: "atu13585627", Registry: reg, Evidence: ev}, Supply{Kind: KindSaaS, Date: sep1}}
	before, regBefore, evBefore := describe(in), *reg, slices.Clone(ev)
	d1, err := DetermineManually(in, manual(RegimeReverseChargeB2B, "AT", ""))
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := DetermineManually(in, manual(RegimeReverseChargeB2B, "AT", ""))
	if describe(in) != before || *reg != regBefore || !slices.Equal(ev, evBefore) || est[0] != "at" {
		t.Errorf("DetermineManually modified its input")
	}
	a, _ := json.Marshal(d1)
	b, _ := json.Marshal(d2)
	if string(a) != string(b) {
		t.Errorf("not deterministic:\n%s\n%s", a, b)
	}
}

func FuzzDetermineManually(f *testing.F) {
	f.Add(uint8(0), RegimeOSSB2C, "FR", "20", "Because.", "r-1")
	f.Add(uint8(1), RegimeDomestic, "de", "19.0", " reason ", "someone")
	f.Add(uint8(2), RegimeReverseChargeB2B, "AT", "", "x", "y")
	f.Add(uint8(3), RegimeOutsideScope, "", "", "z", "w")
	f.Add(uint8(4), RegimeUKB2C, "uk", "0", "é", "\u202e")
	f.Add(uint8(5), "", "EL", "1e999999", "\xff", "")
	ins := []Input{
		{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "FR", Evidence: contradictory("FR", "BE")}, digital},
		{Seller{Country: "AT", CrossBorder: totals("0", "9990")}, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, GrossEUR: counted}},
		{Seller{Country: "DE", OtherEstablishments: []string{"AT"}}, Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}, digital},
		{Seller{Country: "DE", ReviewSpecialTerritories: true}, Buyer{Country: "ES", PostalCode: "35001"}, digital},
		{Seller{Country: "US"}, Buyer{Country: "GB", Evidence: contradictory("GB", "IE")}, ebook},
		{Seller{Country: "GR", Registrations: []Registration{{Scheme: RegistrationNational, Country: "EL"}}}, Buyer{Country: "EL", PostalCode: "63086"}, digital},
		{Seller{}, Buyer{}, Supply{}},
	}
	f.Fuzz(func(t *testing.T, i uint8, regime, cc, rate, reason, by string) {
		in := ins[int(i)%len(ins)]
		m := Manual{Regime: regime, TaxingCountry: cc, RatePercent: rate, Reason: reason, DecidedBy: by}
		d, err := DetermineManually(in, m)
		checkManual(t, in, m, d, err)
		if err == nil {
			if _, err := json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkDetermineManually(b *testing.B) {
	in := Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "FR", Evidence: contradictory("FR", "BE")}, digital}
	m := Manual{Regime: RegimeOSSB2C, TaxingCountry: "FR", RatePercent: "20", Reason: "Billing address checked.", DecidedBy: "reviewer-7"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DetermineManually(in, m); err != nil {
			b.Fatal(err)
		}
	}
}

package fx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// National currencies (issue 18). Art. 230 Directive 2006/112/EC lets an
// invoice be in any currency "provided that the amount of VAT payable or to
// be adjusted is expressed in the national currency of the Member State,
// using the conversion mechanism provided for in Article 91"; on a UBL
// invoice that is BT-6 (TaxCurrencyCode) and BT-111 (the VAT total in it,
// EN 16931 BR-53). Art. 91(2), third subparagraph (inserted by Directive
// 2010/45/EU), obliges every Member State to accept instead "the latest
// exchange rate published by the European Central Bank at the time the tax
// becomes chargeable", conversion between non-euro currencies going through
// each one's euro rate, and lets it require notification of that choice
// (inserted by Directive 2010/45/EU,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32010L0045;
// consolidated: https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112;
// the national transpositions cited below confirm it). The United Kingdom is outside the Directive since
// 2021 and its rules do not list the ECB rate.
//
// This file says which states those are, which currency and which rate rule
// each prescribes, and converts an exact EUR amount at the ECB rate where
// the rule allows it. It never substitutes a rate: a state that does not
// accept the ECB rate gives ErrNationalRateRequired, a rate the table lacks
// gives ErrNationalRateUnavailable, and the engine turns both into a review
// reason. The embedded data holds USD only; the other currencies come from
// the ECB feeds (Refresher, Fetch), which carry all of them.

// ECB use allowed by a state's rule.
const (
	// ECBAllowed: the state accepts the ECB reference rate (Art. 91(2),
	// third subparagraph, as transposed).
	ECBAllowed = "allowed"
	// ECBNotAccepted: the state's rules name other rates only; this package
	// cannot supply them.
	ECBNotAccepted = "not-accepted"
)

// Timing of the rate a state's rule selects.
const (
	// TimingChargeableEvent: the latest rate at the chargeable event; the
	// caller's Art. 91(2) policy (LatestPublishedAt or ForDayOrPrevious)
	// selects the publication.
	TimingChargeableEvent = "chargeable-event"
	// TimingDayBefore: the rate published for the last day before the day of
	// the tax point (Poland, Art. 31a ustawy o VAT).
	TimingDayBefore = "day-before"
)

// RateRule is how a state wants a foreign-currency amount converted into its
// currency for VAT, with the law that says so. It is part of a
// NationalConversion's provenance.
type RateRule struct {
	ID           string `json:"id"`           // stable: "pl-vat-31a-2-ecb"
	ECB          string `json:"ecb"`          // ECBAllowed or ECBNotAccepted
	Timing       string `json:"timing"`       // TimingChargeableEvent or TimingDayBefore
	NationalRate string `json:"nationalRate"` // the state's own rate, for the record
	Law          string `json:"law"`          // the provisions, with a public source
	Note         string `json:"note,omitempty"`
}

// NationalCurrency is the currency a taxing state requires VAT to be
// stated in besides the invoice currency, and its rate rule.
type NationalCurrency struct {
	Country  string   `json:"country"`  // ISO 3166-1 alpha-2 as package vat writes it ("PL", "GB")
	Currency string   `json:"currency"` // ISO 4217 ("PLN")
	Basis    string   `json:"basis"`    // why VAT must be stated in it
	Rule     RateRule `json:"rule"`
	// AlsoAccepted lists currencies the state accepts for the VAT amount
	// instead (Denmark: EUR). An invoice in one of them needs no BT-6.
	AlsoAccepted []string `json:"alsoAccepted,omitempty"`
}

// NationalRulesFrom is the first supply date NationalCurrencyFor answers
// for: 1 January 2023, when Croatia adopted the euro. Earlier changes of
// the euro area are not modelled.
const NationalRulesFrom = "2023-01-01"

var (
	// ErrNoNationalRule means NationalCurrencyFor has no answer: the country
	// is neither an EU Member State nor GB, or the date is before
	// NationalRulesFrom.
	ErrNoNationalRule = errors.New("fx: no national-currency rule")

	// ErrNationalRateRequired means the state does not accept the ECB rate
	// and this package has no source for the rate it requires (GB: HMRC
	// VAT Notice 700 §16.3). The engine records a review reason.
	ErrNationalRateRequired = errors.New("fx: national rate required")

	// ErrNationalRateUnavailable means the state accepts the ECB rate but
	// the table has no rate for its currency at the date the rule selects
	// (the embedded data is USD only; the feeds bring the rest). It wraps
	// the lookup's ErrNoRate. Never a reason to use another rate: the
	// engine records a review reason.
	ErrNationalRateUnavailable = errors.New("fx: national-currency rate unavailable")
)

// euroArea is the euro area on NationalRulesFrom (20 states; Croatia from
// 1 January 2023). Bulgaria joins on 1 January 2026 (bulgariaEuro).
var euroArea = []string{"AT", "BE", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PT", "SI", "SK"}

// bulgariaEuro: Council Decision (EU) 2025/1407 of 8 July 2025 on the
// adoption of the euro by Bulgaria on 1 January 2026; Council Regulation (EU)
// 2025/1409 fixes the irrevocable rate at 1 EUR = 1.95583 BGN
// (https://eur-lex.europa.eu/eli/reg/2025/1409/oj). Supplies from that date
// are taxed in euro; returns for periods ending before it stay in leva
// (Bulgarian Euro Introduction Act, Art. 50, as reported by the BNB).
const bulgariaEuro = "2026-01-01"

const art230 = "Art. 230 Directive 2006/112/EC (VAT payable expressed in the national currency, converted by Art. 91); EN 16931 BT-6/BT-111"

// art91ECB is the Directive's own ECB option, which every Member State must
// accept.
const art91ECB = "Art. 91(2), third subparagraph, Directive 2006/112/EC (inserted by Directive 2010/45/EU): Member States shall accept the latest ECB rate at the time the tax becomes chargeable"

var nationalCurrencies = map[string]NationalCurrency{
	"CZ": {
		Country: "CZ", Currency: "CZK", Basis: art230,
		Rule: RateRule{
			ID: "cz-dph-4-5", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "ČNB foreign-exchange market rate for the day the duty to declare arises",
			Law: "§ 4 odst. 5 zákona č. 235/2004 Sb., o dani z přidané hodnoty: the ČNB rate " +
				"or \"poslední směnný kurz zveřejněný Evropskou centrální bankou\" (non-euro pairs through the euro); " + art91ECB,
		},
	},
	"DK": {
		Country: "DK", Currency: "DKK", Basis: art230 + "; momsbekendtgørelsen (BEK nr. 1435 af 29/11/2023) § 97, stk. 2",
		AlsoAccepted: []string{"EUR"},
		Rule: RateRule{
			ID: "dk-momsbek-97-4-ecb", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "the latest published rate at the time of the chargeable event (Danmarks Nationalbank), or the customs rate",
			Law: "momsbekendtgørelsen § 97, stk. 4: the latest rate published when VAT becomes chargeable; " +
				"ECB rates may be used (DKK/EUR, and third currencies through EUR); " + art91ECB,
			Note: "§ 97, stk. 2 accepts the VAT amount in DKK or EUR: an EUR invoice needs no DKK figure. " +
				"The choice of rate must be noted in the accounts and binds for at least 2 years (§ 97, stk. 4).",
		},
	},
	"HU": {
		Country: "HU", Currency: "HUF", Basis: art230,
		Rule: RateRule{
			ID: "hu-afa-80-ecb", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "a credit institution's selling rate or the MNB official rate at the chargeable event",
			Law:          "2007. évi CXXVII. törvény (Áfa tv.) 80. § (bank, MNB or ECB rate; ado.hu, \"Árfolyam az áfában\"); " + art91ECB,
			Note:         "The exact paragraph of § 80 that admits the ECB rate, and any notification duty, were not re-read for this package.",
		},
	},
	"PL": {
		Country: "PL", Currency: "PLN", Basis: art230,
		Rule: RateRule{
			ID: "pl-vat-31a-2-ecb", ECB: ECBAllowed, Timing: TimingDayBefore,
			NationalRate: "NBP average rate of the last working day before the day the tax obligation arises (art. 31a ust. 1)",
			Law: "art. 31a ust. 1 i 2 ustawy z dnia 11 marca 2004 r. o podatku od towarów i usług: " +
				"the NBP rate, or the ECB rate published for the last day before the tax obligation arises " +
				"(option since 2013, ustawa z 16 listopada 2012 o redukcji niektórych obciążeń administracyjnych w gospodarce)",
			Note: "The day before is the Polish calendar day (CET/CEST) before the day of the tax point.",
		},
	},
	"RO": {
		Country: "RO", Currency: "RON", Basis: art230,
		Rule: RateRule{
			ID: "ro-cf-290-ecb", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "the latest BNR rate (or the settling bank's rate) valid when the tax becomes chargeable",
			Law: "Codul fiscal (Legea 227/2015) art. 290, carrying over art. 139^1 alin. (2) of Legea 571/2003 as amended from 1 January 2013: " +
				"\"ultimul curs de schimb comunicat de Banca Națională a României sau ultimul curs de schimb publicat de Banca Centrală Europeană\"; " + art91ECB,
		},
	},
	"SE": {
		Country: "SE", Currency: "SEK", Basis: art230,
		Rule: RateRule{
			ID: "se-ml-8-21-ecb", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "Nasdaq OMX Stockholm mid rate (published by the Riksbank), the latest at the chargeable event",
			Law: "8 kap. 21–22 §§ mervärdesskattelagen (2023:200); Skatteverket, rättslig vägledning \"Omräkning av utländsk valuta\" " +
				"(the Nasdaq OMX mid rate or the ECB rate; non-euro pairs through the euro); " + art91ECB,
		},
	},
	"BG": {
		Country: "BG", Currency: "BGN", Basis: art230,
		Rule: RateRule{
			ID: "bg-art91-ecb", ECB: ECBAllowed, Timing: TimingChargeableEvent,
			NationalRate: "BNB rate; the lev was fixed to the euro at 1.95583 under the currency board",
			Law:          art91ECB,
			Note: "Supplies before 1 January 2026 only (Council Decision (EU) 2025/1407). The ECB published its BGN reference rate " +
				"(1.9558) until 31 December 2025; the Bulgarian VAT Act's own conversion provision was not re-read for this package.",
		},
	},
	"GB": {
		Country: "GB", Currency: "GBP",
		Basis: "VAT Regulations 1995 reg. 14 and HMRC guidance \"Transactions in foreign currencies and VAT\": " +
			"a UK VAT invoice in a foreign currency shows the net total and the VAT per rate in sterling",
		Rule: RateRule{
			ID: "gb-notice700-16-3", ECB: ECBNotAccepted, Timing: TimingChargeableEvent,
			NationalRate: "the UK market selling rate at the time of supply, or HMRC's period rate of exchange, or a rate HMRC agreed in writing",
			Law: "HMRC VAT Notice 700 §16.3, with force of law (VATA 1994 Sch. 6 para 11; gov.uk \"VAT tertiary legislation: valuation\"), " +
				"options (a) to (c)",
			Note: "The ECB rate is none of these; this package has no HMRC period rates, so GBP figures need review.",
		},
	},
}

// normalizeCountry maps the aliases EL (Greece in VAT numbers) and UK to
// ISO 3166-1.
func normalizeCountry(c string) string {
	switch c {
	case "EL":
		return "GR"
	case "UK":
		return "GB"
	}
	return c
}

// NationalCurrencyFor returns the currency, besides the invoice's, in which
// the VAT of a supply taxed in country at instant at must be stated, and the
// state's rate rule: CZ, DK, HU, PL, RO, SE and GB always; BG for supplies
// before 1 January 2026 (Sofia time). ok is false for a euro-area state,
// which needs no second currency when the invoice is in euro (Art. 230).
// The supply instant is taken in the state's own time (CET/CEST, EET/EEST,
// GMT/BST). Errors wrap ErrNoNationalRule.
//
// Whether an invoice needs the figure at all depends on whose invoicing
// rules apply (Art. 219a: e.g. the Member State of identification for OSS
// supplies); that is the engine's decision, not this function's.
func NationalCurrencyFor(country string, at time.Time) (nc NationalCurrency, ok bool, err error) {
	c := normalizeCountry(country)
	d := localDay(c, at)
	if from, _ := parseISODate(NationalRulesFrom); d < from {
		return NationalCurrency{}, false, fmt.Errorf("%w: %s on %s: before %s", ErrNoNationalRule, country, d, NationalRulesFrom)
	}
	if c == "BG" {
		if euro, _ := parseISODate(bulgariaEuro); d >= euro {
			return NationalCurrency{}, false, nil
		}
	}
	if n, found := nationalCurrencies[c]; found {
		return n, true, nil
	}
	if slices.Contains(euroArea, c) {
		return NationalCurrency{}, false, nil
	}
	return NationalCurrency{}, false, fmt.Errorf("%w: %q is not an EU Member State or GB", ErrNoNationalRule, country)
}

// localDay is the calendar date of at in country's standard time zone with
// the European summer-time rule (Directive 2000/84/EC; the UK switches at
// the same instants). Countries without an entry count in CET.
func localDay(country string, at time.Time) day {
	base := int64(cetOffset)
	switch country {
	case "GB", "IE", "PT":
		base = 0
	case "BG", "RO", "GR", "CY", "EE", "FI", "LT", "LV":
		base = 2 * 3600
	}
	u := at.Unix()
	summer := frankfurtOffset(u) == cestOffset
	if summer {
		base += 3600
	}
	return day(floorDiv(u+base, secondsPerDay))
}

// NationalConversion is an exact EUR amount (typically the invoice's VAT
// total, BT-110, kept at ExactScale) stated in a national currency, with the
// rate and rule used. Its JSON is stable.
type NationalConversion struct {
	Country     string          `json:"country"`
	Currency    string          `json:"currency"`
	At          string          `json:"at"`          // the chargeable event (RFC 3339 UTC) the rule was applied to
	AmountEUR   string          `json:"amountEur"`   // the EUR amount converted, canonical
	Rate        Rate            `json:"rate"`        // the ECB rate, Quote = Currency, with its provenance
	AmountExact string          `json:"amountExact"` // AmountEUR × Rate, exact (a product of decimals needs no rounding)
	Amount      decimal.Decimal `json:"-"`
	AmountStr   string          `json:"amount"` // rounded once to 2 decimals, half away from zero (BT-111: BR-DEC-15)
	Rounding    string          `json:"rounding"`
	Scale       int             `json:"scale"`
	Rule        RateRule        `json:"rule"`
}

// ConvertEURToNational states amountEUR in nc's currency at the ECB rate the
// state's rule selects, for the chargeable event at under the caller's
// Art. 91(2) policy p (the engine's LatestPublishedAt default, or
// ForDayOrPrevious as an account option):
//
//   - TimingChargeableEvent: src's rate for nc.Currency at (at, p);
//   - TimingDayBefore (PL): the publication for the state's calendar day
//     before the day of at (ForDayOrPrevious at that day), whatever p;
//   - p == PeriodEndOrNext (an OSS/IOSS return converted at the period end,
//     Arts. 366(2), 369h(2)): that rule, whatever the state's.
//
// The ECB quotes every currency per euro, so the amount is multiplied, never
// divided, and a EUR amount converted this way is exactly the Art. 91(2)
// cross rate of the invoice currency. Errors: ErrNationalRateRequired when
// the state does not accept the ECB rate (GB); ErrNationalRateUnavailable
// (wrapping ErrNoRate) when the table lacks the currency; ErrNotYetPublished
// when the publication is not out yet (retry once it is); ErrPolicy.
func ConvertEURToNational(ctx context.Context, src Source, amountEUR decimal.Decimal, nc NationalCurrency, at time.Time, p Policy) (NationalConversion, error) {
	if nc.Currency == "" {
		return NationalConversion{}, fmt.Errorf("%w: empty NationalCurrency", ErrNoNationalRule)
	}
	if nc.Rule.ECB != ECBAllowed {
		return NationalConversion{}, fmt.Errorf("%w: %s (%s) does not accept the ECB rate: %s",
			ErrNationalRateRequired, nc.Country, nc.Currency, nc.Rule.NationalRate)
	}
	if !p.Valid() {
		return NationalConversion{}, fmt.Errorf("%w %q", ErrPolicy, string(p))
	}
	qat, qp := at, p
	if p != PeriodEndOrNext && nc.Rule.Timing == TimingDayBefore {
		qat, qp = dayNoonUTC(localDay(nc.Country, at)-1), ForDayOrPrevious
	}
	r, err := src.Rate(ctx, nc.Currency, qat, qp)
	if errors.Is(err, ErrNoRate) {
		return NationalConversion{}, fmt.Errorf("%w: %s for %s: %w", ErrNationalRateUnavailable, nc.Currency, nc.Country, err)
	}
	if err != nil {
		return NationalConversion{}, err
	}
	exact := amountEUR.Mul(r.Value)
	amount := exact.Round(2)
	return NationalConversion{
		Country:     nc.Country,
		Currency:    nc.Currency,
		At:          at.UTC().Format(time.RFC3339Nano),
		AmountEUR:   canonicalDecimal(amountEUR),
		Rate:        r,
		AmountExact: canonicalDecimal(exact),
		Amount:      amount,
		AmountStr:   amount.StringFixed(2),
		Rounding:    RoundingHalfAwayFromZero,
		Scale:       2,
		Rule:        nc.Rule,
	}, nil
}

// Check recomputes a decoded NationalConversion from its amountEur and raw
// rate. Errors wrap ErrInconsistent.
func (n NationalConversion) Check() error {
	eur, err := decimal.NewFromString(n.AmountEUR)
	if err != nil || canonicalDecimal(eur) != n.AmountEUR {
		return fmt.Errorf("%w: amountEur %q is not a canonical decimal", ErrInconsistent, n.AmountEUR)
	}
	rate, err := parseRateValue(n.Rate.Raw)
	switch {
	case err != nil:
		return fmt.Errorf("%w: rate.raw %q: %v", ErrInconsistent, n.Rate.Raw, err)
	case n.Rate.Base != "EUR" || n.Rate.Quote != n.Currency:
		return fmt.Errorf("%w: rate is %s per %s, want %s per EUR", ErrInconsistent, n.Rate.Quote, n.Rate.Base, n.Currency)
	case n.Rounding != RoundingHalfAwayFromZero || n.Scale != 2:
		return fmt.Errorf("%w: rounding %q scale %d", ErrInconsistent, n.Rounding, n.Scale)
	}
	if err := n.Rate.checkPublishedFrom(); err != nil {
		return err
	}
	exact := eur.Mul(rate)
	if n.AmountExact != canonicalDecimal(exact) || n.AmountStr != exact.Round(2).StringFixed(2) {
		return fmt.Errorf("%w: amount %q (exact %q), recomputed %q (%q)",
			ErrInconsistent, n.AmountStr, n.AmountExact, exact.Round(2).StringFixed(2), canonicalDecimal(exact))
	}
	return nil
}

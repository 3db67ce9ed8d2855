package vat

import (
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// Conditional reduced rates.
//
// Some reduced rates apply only when the supply meets a legal condition
// that only the seller knows: a French press publication must be recognised
// by the CPPAP (2.1 %, article 298 septies CGI), an Italian e-book or
// e-periodical must carry an ISBN or ISSN (4 %, article 1(667) Law
// 190/2014 as amended), a Danish e-publication is zero-rated only as a
// newspaper (momsloven § 34(1)(18)). The rate table marks such a row with
// its condition (vat/ratedata/corrections.json, "conditions"); the request
// or the account attests the condition in Supply.Conditions. Without the
// attestation the determination is manual review with
// reduced_rate_condition_unattested: the reduced rate is not applied, and
// the standard rate is not guessed either, since the supply may well meet
// the condition. A determination that applied a conditional rate names the
// condition in Determination.RateCondition.

// Condition codes (Supply.Conditions). Rates() lists them with their
// description and source (RateTable.Conditions).
const (
	// ConditionDKNewspaper: the e-publication is a newspaper within
	// momsloven § 34(1)(18) (Denmark, 0 %).
	ConditionDKNewspaper = "dk_newspaper"
	// ConditionFRPressCPPAP: the publication or online press service is
	// recognised by the CPPAP (France, 2.1 %).
	ConditionFRPressCPPAP = "fr_press_cppap"
	// ConditionITISBNISSN: the publication is identified by an ISBN or ISSN
	// and has the characteristics of a book, newspaper or periodical
	// (Italy, 4 %).
	ConditionITISBNISSN = "it_isbn_issn"
)

// Reason codes of conditional rates.
const (
	// ReasonRateConditionUnattested: review. The reduced rate that applies
	// to the kind depends on a legal condition the request did not attest.
	ReasonRateConditionUnattested = "reduced_rate_condition_unattested"
	// ReasonConditionUnknown: review. Supply.Conditions holds a code that is
	// not one of the Condition constants.
	ReasonConditionUnknown = "supply_condition_unknown"
)

// RateCondition is a legal condition of a reduced rate: in
// Determination.RateCondition the condition the applied rate rests on, as
// attested. Its JSON form is part of the record ("rateCondition").
type RateCondition struct {
	Code        string `json:"code"`
	Description string `json:"description"`
	Source      string `json:"source"`
	// Attested is true in a determination: the request or the account
	// attested the condition.
	Attested bool `json:"attested,omitempty"`
}

// Conditions lists the legal conditions of the table's reduced rates,
// sorted by code.
func (t *RateTable) Conditions() []RateCondition {
	out := make([]RateCondition, len(t.conditions))
	for i, c := range t.conditions {
		out[i] = RateCondition{Code: c.code, Description: c.description, Source: c.source}
	}
	return out
}

// conditionDef is the table's definition of a condition code. The codes a
// request may attest are this build's (knownCondition): a table file may
// restate a condition's description and source, not add a code, since a
// code is part of the API its clients attest.
func (t *RateTable) conditionDef(code string) (rateConditionDef, bool) {
	for _, c := range t.conditions {
		if c.code == code {
			return c, true
		}
	}
	return rateConditionDef{}, false
}

// knownCondition reports whether code is a condition code of this build.
func knownCondition(code string) bool {
	for _, c := range rateConditionDefs {
		if c.code == code {
			return true
		}
	}
	return false
}

// checkConditions validates Supply.Conditions: every code must be known.
func (b *builder) checkConditions(codes []string) bool {
	ok := true
	for i, c := range codes {
		if !knownCondition(strings.TrimSpace(c)) {
			b.review(ReasonConditionUnknown, "supply.conditions[%d] %s is not a known condition code (known: %s).", i, shown.Quote(c), strings.Join(conditionCodes(), ", "))
			ok = false
		}
	}
	return ok
}

func conditionCodes() []string {
	out := make([]string, len(rateConditionDefs))
	for i, c := range rateConditionDefs {
		out[i] = c.code
	}
	return out
}

// conditionMet applies a rate's condition: it records the attested
// condition, or a manual review when it is not attested.
func (r *rules) conditionMet(res rateResult, where string) bool {
	if res.condition == "" {
		return true
	}
	def, _ := r.t.conditionDef(res.condition)
	attested := slices.ContainsFunc(r.in.Supply.Conditions, func(c string) bool { return strings.TrimSpace(c) == res.condition })
	if !attested {
		r.b.review(ReasonRateConditionUnattested, "The %s rate of %s is %s only where %s The condition %q is not attested in supply.conditions, and the standard rate is not assumed either (%s).",
			seriesLabel[kindSeries[r.in.Supply.Kind]], where, res.rate.String()+" %", lowerFirst(def.description), def.code, def.source)
		return false
	}
	r.b.d.RateCondition = &RateCondition{Code: def.code, Description: def.description, Source: def.source, Attested: true}
	return true
}

func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

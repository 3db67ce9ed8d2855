package vat

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// The EUR 10,000 threshold of Art. 59c Directive 2006/112/EC, decided from
// the seller's own running totals.
//
// Art. 59c(1): Art. 58 (taxation where the consumer is) does not apply
// where (a) the supplier is established only in one member state, (b) it
// supplies TBE services to non-taxable persons in another member state, and
// (c) "the total value, exclusive of VAT, of [those] supplies ... does not
// in the current calendar year exceed EUR 10 000 ... nor did it do so in
// the course of the preceding calendar year". Art. 59c(2): "Where, during a
// calendar year, the threshold ... is exceeded, ... Article 58 shall apply
// as of that time." Art. 59c(3): the supplier may opt for Art. 58, for at
// least two calendar years. (Text: https://datenbank.nwb.de/Dokument/452295_59c;
// EUR-Lex CELEX 32006L0112.)
//
// "Exceed" is strictly more: a total of exactly EUR 10,000.00 does not
// exceed EUR 10,000, so origin taxation still applies; one cent more
// does. The supply that takes the year's total over the threshold is itself
// taxed where the consumer is ("as of that time"), and so is every later
// supply of that year and of the following year (whose preceding year then
// exceeded). The value counted is the supply's value exclusive of VAT: its
// VAT-inclusive EUR amount (Supply.GrossEUR) divided by 1 + the rate
// charged. Whether a supply crosses is tested with the value it has under
// origin taxation, the treatment it would have if it did not cross; that
// value is counted for the crossing supply, so that the total after it is
// over the threshold whatever the destination rate. Only B2C TBE supplies
// by an EU seller established in one member state to a consumer in the EU
// VAT territory of another member state count (Art. 59c(1)(b); Art. 5(2):
// the territories of Art. 6 are not "Member States").
//
// "As of that time" is the order in which the supplies were made, which
// need not be the order in which they are recorded: a settlement may be
// reported after one dated later. Running totals are sums, and a sum does
// not say which of its supplies took it over. A supply dated before one
// already counted (CrossBorderTotals.LatestCounted) that would take the
// year over EUR 10,000, or dated before the supply that took its year over
// (CrossBorderTotals.CrossedAt), is therefore not decided on the sums:
// Determine sends it to review (threshold_order_in_doubt), and a person's
// determination of either place stands (rule order_decided_manually).

// thresholdLimit is the EUR 10,000 of Art. 59c(1)(c).
var thresholdLimit = decimal.New(10000, 0)

// netPlaces is the number of decimal places of a supply's value exclusive
// of VAT (a division, which does not always terminate): far below a cent,
// and fixed, so the result never depends on decimal.DivisionPrecision.
const netPlaces = 10

// Threshold rules (ThresholdCheck.Rule).
const (
	// ThresholdWithin: current and previous year within EUR 10,000,
	// including this supply: origin taxation (Art. 59c(1)).
	ThresholdWithin = "within_threshold"
	// ThresholdCrossed: this supply takes the current year's total over
	// EUR 10,000: destination taxation from this supply on (Art. 59c(2)).
	ThresholdCrossed = "exceeded_by_this_supply"
	// ThresholdCurrentYear: the current year's total before this supply
	// already exceeds EUR 10,000 (Art. 59c(1)(c), (2)).
	ThresholdCurrentYear = "current_year_exceeded"
	// ThresholdPreviousYear: the previous year's total exceeded EUR 10,000
	// (Art. 59c(1)(c), "nor did it do so in the course of the preceding
	// calendar year").
	ThresholdPreviousYear = "previous_year_exceeded"
	// ThresholdStatedOver: the account states the threshold is already
	// exceeded (Seller.OverThreshold).
	ThresholdStatedOver = "stated_over_threshold"
	// ThresholdOpted: the seller opted for destination taxation (Art.
	// 59c(3)); the supply still counts toward the totals.
	ThresholdOpted = "opted_for_destination"
	// ThresholdNotCounted: the supply is not a B2C TBE supply to a consumer
	// in another member state; it does not count (Art. 59c(1)(b)).
	ThresholdNotCounted = "not_counted"
	// ThresholdOrderManual: whether the year was over EUR 10,000 when
	// the supply was made depends on the order of supplies recorded out
	// of their time order, and a person decided the place (the supply
	// counts toward the totals).
	ThresholdOrderManual = "order_decided_manually"
)

// ThresholdCheck is the Art. 59c section of a determination: present when
// Seller.CrossBorder is given for a seller established in one member state
// only and the supply's treatment was decided. The engine adds Counted to
// the seller's total of Year when Counts is true and Counted is set, and
// emits its threshold event on the supply whose Crossed is true (at most
// one per seller and calendar year when supplies are decided in append
// order).
//
// The figures are the running totals the decision was made on. In a record
// of fiscal402's engine, for within_threshold and exceeded_by_this_supply
// they are the totals in the ledger's order (the committer decides again a
// supply whose totals changed before its commit); for a supply already over
// the threshold (previous_year_exceeded, current_year_exceeded, and the
// account's own statements), supplies of the same account committed
// concurrently may stand between the read and the record in the log, so
// PreviousYear, TotalBefore and TotalAfter are at most what a replay of the
// log in order gives (totals only grow). The rule is the one the log's
// order gives: such a supply whose rule a concurrent commit changed (a late
// sale taking the previous year over the limit) is decided again.
type ThresholdCheck struct {
	Rule string `json:"rule"` // one of the Threshold constants
	// Year is the calendar year of the supply in the seller's time zone
	// (Seller.ThresholdYear), the year CurrentYear belongs to.
	Year         int             `json:"year"`
	Limit        decimal.Decimal `json:"limit"`        // EUR 10,000
	PreviousYear decimal.Decimal `json:"previousYear"` // Seller.CrossBorder.PreviousYear
	TotalBefore  decimal.Decimal `json:"totalBefore"`  // Seller.CrossBorder.CurrentYear
	// Counts: the supply counts toward the total (B2C TBE supply to a
	// consumer in another member state).
	Counts bool `json:"counts"`
	// Counted is the supply's value exclusive of VAT in EUR that counts,
	// absent when it does not count or the rate is not known.
	Counted *decimal.Decimal `json:"counted,omitempty"`
	// TotalAfter is TotalBefore + Counted (TotalBefore when the supply does
	// not count); absent when Counted is unknown.
	TotalAfter *decimal.Decimal `json:"totalAfter,omitempty"`
	// Crossed: this supply takes the current year's total from at most
	// EUR 10,000 to more. A supply a person placed in the seller's member
	// state under order_decided_manually did not cross, even when the sum
	// recorded crosses with it: it was made while the year was within, and
	// a supply dated after it took the year over.
	Crossed    bool   `json:"crossed"`
	LegalBasis string `json:"legalBasis"`
}

// Reason codes of the threshold.
const (
	ReasonThresholdInputInvalid = "threshold_input_invalid"           // review: a running total or the EUR amount is unusable
	ReasonThresholdExceeded     = "threshold_exceeded_by_this_supply" // note: destination VAT from this supply on
	ReasonThresholdOrderInDoubt = "threshold_order_in_doubt"          // review: recorded out of time order, it may or may not be over the threshold
)

var thresholdBasis = map[string]string{
	ThresholdWithin:       "Art. 59c(1) " + directive + ": within EUR 10,000 in the current and the preceding calendar year",
	ThresholdCrossed:      "Art. 59c(2) " + directive + ": threshold exceeded during the year, Art. 58 applies as of that supply",
	ThresholdCurrentYear:  "Art. 59c(1)(c) and (2) " + directive + ": threshold exceeded earlier in the current calendar year",
	ThresholdPreviousYear: "Art. 59c(1)(c) " + directive + ": threshold exceeded in the preceding calendar year",
	ThresholdStatedOver:   "Art. 59c(1)(c) " + directive + ": the seller's account states the threshold is exceeded",
	ThresholdOpted:        "Art. 59c(3) " + directive + ": option for taxation at destination (at least two calendar years)",
	ThresholdNotCounted:   "Art. 59c(1)(b) " + directive + ": only supplies to non-taxable persons in another member state count",
	ThresholdOrderManual:  "Art. 59c(1)(c) and (2) " + directive + ": whether the threshold was exceeded when this supply was made depends on the order of supplies recorded out of their time order; decided by a person",
}

// set records the rule applied; a nil section (no totals given) stays nil.
func (th *ThresholdCheck) set(rule string) {
	if th == nil {
		return
	}
	th.Rule = rule
	th.LegalBasis = thresholdBasis[rule]
}

// SubjectToThreshold reports whether a seller established in country (an
// ISO code or the VAT prefix EL, any case) with further establishments
// other is subject to the Art. 59c threshold: established in one member
// state only (Art. 59c(1)(a) Directive 2006/112/EC), so that its
// cross-border B2C TBE supplies are decided on running totals. The seller
// is resolved as Determine resolves it (resolveSeller): Monaco is France
// (Art. 7(1)), and a further establishment in the main one's member state
// is no second state; a review found the engine reading no totals for
// sellers Determine decides on them, so that their EUR 10,000 was never
// found exceeded.
func SubjectToThreshold(country string, other []string) bool {
	s := new(builder).resolveSeller(Seller{Country: country, OtherEstablishments: other})
	return s.ok && s.eu && len(s.other) == 0
}

// subjectToThreshold: the seller is established in one member state only
// (Art. 59c(1)(a)); a seller established outside the EU, or with a further
// establishment, has no threshold.
func (r *rules) subjectToThreshold() bool { return r.seller.eu && len(r.seller.other) == 0 }

// consumerInOtherState decides rows 2–4 for a consumer in another member
// state than the seller's: origin taxation under the threshold (row 2),
// destination taxation through the OSS otherwise (rows 3 and 4).
func (r *rules) consumerInOtherState() {
	if !r.subjectToThreshold() {
		r.oss()
		return
	}
	switch place, _ := r.decideThreshold(r.originNet); place {
	case thresholdInvalid:
		// The review names the unusable figure; neither place is assumed.
	case thresholdDestination:
		r.oss()
	default:
		// thresholdOriginRateUnknown: origin taxation records why the
		// rate is not known (rate_unverified, date_outside_rate_table)
		// and stops.
		r.originBelowThreshold()
	}
}

// Outcomes of decideThreshold.
const (
	thresholdOrigin            = iota + 1 // Art. 59c(1): the seller's member state
	thresholdOriginRateUnknown            // within before this supply, but its value at the origin rate is not known
	thresholdDestination                  // Art. 58: the consumer's member state
	thresholdInvalid                      // a figure is unusable (a review says which)
	thresholdEither                       // a person's determination: the order of the supplies is in doubt, either place stands
)

// decideThreshold applies Art. 59c to a B2C supply by a seller established
// in one member state to a consumer in another: the account's flags, then
// the running totals, then whether this supply, valued by originNet (its
// value exclusive of VAT at the origin rate), takes the year over the
// limit. It records the threshold section (when totals are given) and the
// crossing note, and returns the outcome and the rule applied ("" when the
// account's flags and no totals leave the seller within).
func (r *rules) decideThreshold(originNet func() (decimal.Decimal, bool)) (outcome int, rule string) {
	s := r.in.Seller
	th, ok := r.newThreshold(true)
	switch {
	case !ok:
		return thresholdInvalid, ""
	case s.OptedForDestination:
		th.set(ThresholdOpted)
		return thresholdDestination, ThresholdOpted
	case s.OverThreshold:
		th.set(ThresholdStatedOver)
		return thresholdDestination, ThresholdStatedOver
	case th == nil:
		// No totals: the account's flags are the statement (the
		// behaviour before running totals existed).
		return thresholdOrigin, ""
	case cmpDec(th.PreviousYear, thresholdLimit) > 0: // fixed.go
		th.set(ThresholdPreviousYear)
		return thresholdDestination, ThresholdPreviousYear
	case cmpDec(th.TotalBefore, thresholdLimit) > 0:
		cb, what := s.CrossBorder, "the supply that took the year's total over EUR 10,000"
		crossedAt := cb.CrossedAt
		if !known(crossedAt) && cb.DatesKept && cmpDec(cb.Opening, thresholdLimit) <= 0 {
			// Counted supplies took the year over and the date was not
			// kept: the latest counted date bounds it (the engine floors
			// it at every supply counted before it kept dates), when known.
			crossedAt, what = cb.LatestCounted, "the latest supply counted, the bound of the undated supply that took the year's total over EUR 10,000"
		}
		if out, ok := r.orderInDoubt(th, crossedAt, what); ok {
			return out, th.Rule
		}
		th.set(ThresholdCurrentYear)
		return thresholdDestination, ThresholdCurrentYear
	}
	net, ok := originNet()
	if !ok {
		th.set(ThresholdWithin)
		return thresholdOriginRateUnknown, ThresholdWithin
	}
	r.count(net)
	if cmpDec(*th.TotalAfter, thresholdLimit) <= 0 {
		th.set(ThresholdWithin)
		return thresholdOrigin, ThresholdWithin
	}
	th.Crossed = true // the sum crosses with this supply, whichever crossed in time
	if out, ok := r.orderInDoubt(th, s.CrossBorder.LatestCounted, "a supply already counted"); ok {
		return out, th.Rule
	}
	th.set(ThresholdCrossed)
	y := strconv.Itoa(th.Year)
	r.b.notes = append(r.b.notes, Reason{Code: ReasonThresholdExceeded,
		Detail: "This supply takes the seller's " + y + " total of cross-border B2C TBE supplies over EUR 10,000 (see the threshold section): Art. 58 applies as of this supply, for the rest of " + y + " and for " + strconv.Itoa(th.Year+1) + " (Art. 59c(2) " + directive + ")."})
	return thresholdDestination, ThresholdCrossed
}

// orderInDoubt handles a supply dated before after (a supply counted
// earlier, named by what) whose outcome on the sums depends on the order
// in which the supplies were made (Art. 59c(2): "as of that time"): it is
// sent to review, or, for a person's determination, either place stands
// (rule ThresholdOrderManual). ok is false when the supply is not dated
// before after (or after is not known): the sums decide.
func (r *rules) orderInDoubt(th *ThresholdCheck, after time.Time, what string) (outcome int, ok bool) {
	cb := r.in.Seller.CrossBorder
	// Supplies counted before the dates were kept, which no date covers:
	// this one would take the year over, or the year went over on them.
	undated := !known(after) && cb.DatesKept && cmpDec(cb.CurrentYear, cb.Opening) > 0 && (th.Crossed || cmpDec(cb.Opening, thresholdLimit) <= 0)
	if !undated && (!known(after) || !r.in.Supply.Date.Before(after)) {
		return 0, false
	}
	if r.manual != nil {
		th.set(ThresholdOrderManual)
		return thresholdEither, true
	}
	th.Crossed = false
	if undated {
		r.b.review(ReasonThresholdOrderInDoubt, "This supply of %s is counted with supplies of %d whose dates were not kept (counted before the engine kept them) and, on the running totals (EUR %s before it, EUR %s the year before), the year is or would be over EUR 10,000. "+
			"Whether it was when this supply was made depends on the order in which the supplies were made (Art. 59c(2) %s: Art. 58 applies as of the time the threshold is exceeded), which the totals do not hold: "+
			"decide the place from the records' dates (the seller's member state if the year's supplies made before it stayed within EUR 10,000, else the consumer's).",
			r.in.Supply.Date.UTC().Format(time.RFC3339), th.Year, th.TotalBefore, th.PreviousYear, directive)
		return thresholdInvalid, true
	}
	r.b.review(ReasonThresholdOrderInDoubt, "This supply of %s is recorded after %s dated %s and, on the running totals (year %d: EUR %s before it, EUR %s the year before), the year is or would be over EUR 10,000. "+
		"Whether it was when this supply was made depends on the order in which the supplies were made (Art. 59c(2) %s: Art. 58 applies as of the time the threshold is exceeded), which the totals do not hold: "+
		"decide the place (the seller's member state if the year's supplies made before it stayed within EUR 10,000, else the consumer's), and review the supplies recorded before it and dated after it.",
		r.in.Supply.Date.UTC().Format(time.RFC3339), what, after.UTC().Format(time.RFC3339), th.Year, th.TotalBefore, th.PreviousYear, directive)
	return thresholdInvalid, true
}

// known reports whether an order date of CrossBorderTotals is set: the
// zero time, or the Unix epoch (the zero nanoseconds a caller keeping dates
// as integers has for none), is not; no settlement is that old.
func known(t time.Time) bool { return t.After(time.Unix(0, 0)) }

// newThreshold starts the threshold section from Seller.CrossBorder (nil,
// true without it) and checks the figures; ok is false after a review.
func (r *rules) newThreshold(counts bool) (*ThresholdCheck, bool) {
	cb := r.in.Seller.CrossBorder
	if cb == nil {
		return nil, true
	}
	r.b.threshold = thresholdFigures{check: ThresholdCheck{
		Year:         r.localDate(placeZone(r.seller.country, nil)).year, // thresholdYearOf
		Limit:        thresholdLimit,
		PreviousYear: cb.PreviousYear,
		TotalBefore:  cb.CurrentYear,
		Counts:       counts,
	}}
	th := &r.b.threshold.check
	r.threshold, r.b.d.Threshold = th, th
	ok := true
	if cb.PreviousYear.IsNegative() {
		r.b.review(ReasonThresholdInputInvalid, "Seller.CrossBorder.PreviousYear is negative (EUR %s); a total of supplies cannot be.", cb.PreviousYear)
		ok = false
	}
	if cb.CurrentYear.IsNegative() {
		r.b.review(ReasonThresholdInputInvalid, "Seller.CrossBorder.CurrentYear is negative (EUR %s); a total of supplies cannot be.", cb.CurrentYear)
		ok = false
	}
	if counts && !r.in.Supply.GrossEUR.IsPositive() {
		r.b.review(ReasonThresholdInputInvalid, "Supply.GrossEUR is %s; the supply's VAT-inclusive EUR amount is needed to count it toward the Art. 59c threshold.", r.in.Supply.GrossEUR)
		ok = false
	}
	return th, ok
}

// originNet is the supply's value exclusive of VAT at the rate of the
// seller's member state on the day of supply there.
func (r *rules) originNet() (decimal.Decimal, bool) {
	S := r.seller.country
	day := r.localDate(placeZone(S, nil)).key()
	if !r.t.covers(day) {
		return decimal.Decimal{}, false
	}
	res, ok := r.t.kindRate(nil, S, nil, r.in.Supply.Kind, day) // reviews discarded
	if !ok {
		return decimal.Decimal{}, false // chargeRate looks it up again and records why
	}
	r.origin, r.originFound = res, true
	return netOf(r.in.Supply.GrossEUR, res.rate), true
}

// originRate returns the rate originNet found when chargeRate asks for the
// same one: the seller's country, no territory, the seller's day (the day
// is fixed in the seller's zone by then).
func (r *rules) originRate(cc string, t *territory) (rateResult, bool) {
	if !r.originFound || t != nil || cc != r.seller.country {
		return rateResult{}, false
	}
	return r.origin, true
}

// netOf is gross / (1 + rate/100), to netPlaces decimal places.
func netOf(gross, ratePercent decimal.Decimal) decimal.Decimal {
	if n, ok := netOf64(gross, ratePercent); ok { // fixed.go
		return n
	}
	return gross.Mul(hundred).DivRound(hundred.Add(ratePercent), netPlaces)
}

// finishThreshold completes the section once the rate is charged: the
// value counted at that rate, or a not-counted section for the seller's
// other supplies.
func (r *rules) finishThreshold() {
	if !r.subjectToThreshold() || r.in.Seller.CrossBorder == nil {
		return
	}
	th := r.threshold
	if th == nil {
		if r.b.d.Regime == "" {
			return // an open B2B claim: whether the supply counts is not known yet
		}
		th, _ = r.newThreshold(false)
		th.set(ThresholdNotCounted)
		r.b.threshold.after = th.TotalBefore
		th.TotalAfter = &r.b.threshold.after
		return
	}
	if th.Counted != nil || th.Rule == "" || r.b.d.RatePercent == nil {
		return
	}
	r.count(netOf(r.in.Supply.GrossEUR, r.b.d.RatePercent.Decimal()))
}

// thresholdFigures holds the threshold section with the figures its
// pointers point to (Determination.Threshold points here).
type thresholdFigures struct {
	check          ThresholdCheck
	counted, after decimal.Decimal
}

// count records net as the value counted and the total after it.
func (r *rules) count(net decimal.Decimal) {
	f := &r.b.threshold
	f.counted, f.after = net, addDec(f.check.TotalBefore, net) // fixed.go
	f.check.Counted, f.check.TotalAfter = &f.counted, &f.after
}

// originNote is the note of an origin-taxed supply (row 2). With running
// totals the threshold section carries the figures.
func (r *rules) originNote() string {
	if r.threshold != nil {
		return countryText(r.seller.country, textOriginNoteTotals) // texts.go
	}
	return countryText(r.seller.country, textOriginNoteStated)
}

// originNoteText is the note of an origin-taxed supply by a seller
// established in S, with running totals or without.
func originNoteText(S string, totals bool) string {
	if totals {
		return "The seller is established only in " + S + " and its cross-border B2C TBE supplies, this one included, stay within EUR 10,000 in the current and the preceding calendar year (see the threshold section; Art. 59c(1) " + directive + "); once the threshold is exceeded, destination VAT applies from that supply on (Art. 59c(2))."
	}
	return "The seller is established only in " + S + " and states that its cross-border B2C TBE supplies and distance sales stayed within EUR 10,000 this and last year; once the threshold is exceeded, destination VAT applies from that supply on (Art. 59c(2) " + directive + ")."
}

// RecordedCount is the value a recorded supply with this determination
// counts toward its seller's Art. 59c total, for a total built again from
// the records, and whether it counts: its threshold section's Counted when
// it has one; for a determination made before the section existed, net
// (the supply's EUR value exclusive of VAT) when it was a B2C supply under
// the EU ruleset to a consumer in another member state than sellerCountry
// (the supplies Art. 59c(1)(b) counts). Such a supply taxed where the
// seller is (row 2, Art. 59c(1)) names the seller's state as its place of
// supply; it is known by its note origin_taxation_below_threshold, which
// every version of the engine wrote on it, the person's determination
// included (manualOrigin), and it counts too: the threshold measures
// exactly those supplies (Art. 59c(1)(c) Directive 2006/112/EC, CELEX
// 32006L0112; a review found them left out of a rebuilt total). A supply
// outside the scope of EU VAT is not one, although Heligoland, Büsingen,
// Livigno and Campione d'Italia, which have no code of their own, give
// their parent as its place of supply: the territories of Art. 6 are no
// "Member State" (Art. 5(2)).
//
// A supply that counts by its net value whose net is not a decimal counts
// with an error, not as a supply that does not count: a total built
// without it would be too low, and every decision made on it wrong (a
// review found the rebuild leaving such records out silently).
func (d Determination) RecordedCount(sellerCountry, net string) (decimal.Decimal, bool, error) {
	if th := d.Threshold; th != nil {
		if th.Counts && th.Counted != nil {
			return *th.Counted, true, nil
		}
		return decimal.Zero, false, nil
	}
	byNet := func() (decimal.Decimal, bool, error) {
		v, err := decimal.NewFromString(net)
		if err != nil {
			return decimal.Zero, true, fmt.Errorf("vat: the supply counts toward the Art. 59c total by its net EUR value, which is not a decimal: %q", net)
		}
		return v, true, nil
	}
	if d.Jurisdiction == JurisdictionEU && d.Regime == RegimeDomestic && d.hasReason(ReasonOriginTaxation) {
		return byNet()
	}
	place := stateOfPlace(d.PlaceOfSupply)
	if d.BuyerTreatment != TreatmentB2C || d.Jurisdiction != JurisdictionEU || d.Regime == RegimeOutsideScope || !isEUMember(place) || place == stateOfPlace(sellerCountry) {
		return decimal.Zero, false, nil
	}
	return byNet()
}

// stateOfPlace is the state in whose VAT territory a place-of-supply code
// (Determination.PlaceOfSupply, or a seller's country) lies: a territory
// with its own rates or treated as a state is its state (PT-20 and PT-30
// Portugal, MC France under Art. 7(1) Directive 2006/112/EC, IM and XI the
// United Kingdom), a territory outside the EU VAT area none (""), any other
// code itself. A review found RecordedCount reading PT-20, PT-30 and MC as
// no member state, leaving supplies to consumers there out of a rebuilt
// Art. 59c total, and a Monaco seller's sales in France in it.
//
// After the ISO 3166-2 codes of subdivisionTerritories, a code is placed
// by MemberStateOf and InUKVATArea, which hold the rule of Art. 7(1) for
// every package (TestStateOfPlaceAgreesWithMemberStateOf).
func stateOfPlace(code string) string {
	cc := normalizeCountry(code)
	if t := subdivisionTerritories[cc]; t != nil {
		if t.kind == outsideEU {
			return ""
		}
		return t.parent
	}
	if state, ok := MemberStateOf(cc); ok {
		return state
	}
	if InUKVATArea(cc) {
		return "GB"
	}
	if factsOf(cc).territory != nil {
		return "" // neither in the EU nor in the UK VAT area: a territory of Art. 6 (AX, IC, GP, ...)
	}
	return cc
}

// subdivisionTerritories are the territories whose place-of-supply code is
// an ISO 3166-2 subdivision (ES-CN, PT-20, GB-NIR, ...), by that code.
var subdivisionTerritories = func() map[string]*territory {
	m := make(map[string]*territory)
	for _, t := range []*territory{tCanary, tCeuta, tMelilla, tAthos, tAzores, tMadeira, tNI} {
		m[t.code] = t
	}
	return m
}()

// hasReason reports whether the determination carries a reason (a note or
// a review) with code.
func (d Determination) hasReason(code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

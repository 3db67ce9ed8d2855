package vat

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// CrossBorderTotals are the seller's running totals, exclusive of VAT and in
// EUR at full precision, of its supplies of telecommunications, broadcasting
// and electronically supplied (TBE) services to non-taxable persons
// established or residing in another member state: the figure both the
// EUR 10,000 threshold of Art. 59c(1)(c) Directive 2006/112/EC and the
// EUR 100,000 limit of Art. 24b(d) Implementing Regulation 282/2011 test.
// The caller keeps them from its ledger (plus any opening figure for sales
// made before it kept the books); the vat package only reads them.
type CrossBorderTotals struct {
	// PreviousYear is the total of the whole calendar year before the
	// supply's year.
	PreviousYear decimal.Decimal
	// CurrentYear is the total of the supply's calendar year before this
	// supply (this supply excluded).
	CurrentYear decimal.Decimal
	// LatestCounted is the latest date (instant) of the supplies counted
	// in the totals, of any year; zero when not known. A supply dated
	// before it that would take the year over EUR 10,000 cannot be told
	// to be the one that crossed from the sums alone (threshold_order_in_doubt).
	LatestCounted time.Time
	// CrossedAt is the date (instant) of the supply that took CurrentYear
	// over EUR 10,000, or a later one; zero when not known (an opening
	// figure over it, totals kept before the dates were). A supply dated
	// before it was made while the year may still have been within
	// (threshold_order_in_doubt).
	CrossedAt time.Time
	// DatesKept: the caller keeps the dates above with the totals (as
	// fiscal402's engine does), so that a zero date means no supply it
	// counted since it kept them, not "not known". Supplies counted in
	// CurrentYear (beyond Opening) before the caller kept dates, which
	// neither date then covers, leave the order of a supply in doubt where
	// its place depends on it: a supply that would take the year over
	// while LatestCounted is zero, and a supply of a year over EUR 10,000
	// whose CrossedAt is zero and LatestCounted (which then bounds the
	// undated crossing) zero too, are threshold_order_in_doubt. Without
	// DatesKept a zero date is not known and the sums decide.
	DatesKept bool
	// Opening is the part of CurrentYear that is an opening figure (the
	// seller's supplies before the books); the rest was counted supply by
	// supply. An opening figure over EUR 10,000 by itself crossed before
	// the books: every counted supply is after it.
	Opening decimal.Decimal
}

// Exceeded is whether the seller is already over the Art. 59c threshold
// before the supply: the previous calendar year's total, or the current
// year's before this supply, is over EUR 10,000 (Art. 59c(1)(c)
// Directive 2006/112/EC). It is what a seller's statement "over the
// threshold" (Seller.OverThreshold) asserts.
func (t CrossBorderTotals) Exceeded() bool {
	return t.PreviousYear.GreaterThan(thresholdLimit) || t.CurrentYear.GreaterThan(thresholdLimit)
}

// CountedSupply is a supply counted toward a seller's Art. 59c total of one
// calendar year, as a total counted again from the records has it: its
// date, the value it counts (Determination.RecordedCount) and the caller's
// id of its record.
type CountedSupply struct {
	Date  time.Time
	Value decimal.Decimal
	ID    string
}

// YearCount is a calendar year's Art. 59c total counted again from its
// supplies (CountYear).
type YearCount struct {
	// Total is the supplies' sum (the opening figure excluded).
	Total decimal.Decimal
	// Latest is the latest date of the supplies (zero for none).
	Latest time.Time
	// Crossing is the supply that, in the order the supplies were made,
	// took the year's total, opening figure included, from at most
	// EUR 10,000 to more (Art. 59c(2) Directive 2006/112/EC: Art. 58
	// applies "as of that time"); nil when the year stayed within or was
	// over on its opening figure alone (every supply made after it).
	// Before and After are the totals, opening included, around it.
	Crossing      *CountedSupply
	Before, After decimal.Decimal
}

// CountYear counts a year's supplies from its opening figure in the order
// they were made: by date, supplies of the same date in the order given
// (supplies is sorted so). A recount knows every supply's date, so the
// supply that took the year over is the one the dates say, not the one a
// count in the order of recording met (CrossBorderTotals.CrossedAt).
func CountYear(opening decimal.Decimal, supplies []CountedSupply) YearCount {
	slices.SortStableFunc(supplies, func(a, b CountedSupply) int { return a.Date.Compare(b.Date) })
	c := YearCount{Total: decimal.Zero}
	for i, s := range supplies {
		before := opening.Add(c.Total)
		c.Total, c.Latest = c.Total.Add(s.Value), s.Date
		if after := opening.Add(c.Total); c.Crossing == nil && cmpDec(before, thresholdLimit) <= 0 && cmpDec(after, thresholdLimit) > 0 {
			c.Crossing, c.Before, c.After = &supplies[i], before, after
		}
	}
	return c
}

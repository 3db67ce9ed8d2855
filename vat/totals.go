package vat

import (
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

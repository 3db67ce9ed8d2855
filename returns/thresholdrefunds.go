package returns

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// An EU seller established in one member state taxes its cross-border B2C
// supplies of telecommunications, broadcasting and electronic services
// where it is established while "the total value, exclusive of VAT," of
// such supplies stays within EUR 10,000 in the current and the preceding
// calendar year (Art. 59c(1)(c) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112);
// the supply that takes it over and every later one are taxed where the
// customer is (Art. 59c(2)). A refund reduces the taxable amount of the
// supply it refunds ("where the price is reduced after the supply takes
// place, the taxable amount shall be reduced accordingly", Art. 90(1)),
// but the engine's running total (fiscal's cross-border-totals) only ever
// grows: it is what each decision was made on, in the order the supplies
// were recorded. When refunds of supplies that counted bring a year that
// went over EUR 10,000 back within it, the supplies taxed in the member
// state of consumption because that year was over may have been taxable
// where the seller is established. Whether a later reduction undoes a
// crossing the Directive does not say in terms, and the engine does not
// guess: the return names the year, the refunds and its supplies that
// rested on the crossing, for a person to check before filing (Review).
// The year's total is read as the account's running totals stand when the
// return is asked for (fiscal.Books.Totals), the refunds as the return's
// checkpoint holds them.

// thresholdYears are the supplies in a return's lines taxed at destination
// because a year was over the Art. 59c threshold, by that year.
type thresholdYears map[int]*thresholdYear

type thresholdYear struct {
	limit decimal.Decimal // as the records state it
	idx   []int64
}

// add notes a supply decided under rule in the threshold year year: one
// that crossed, or was made after the year's crossing, rests on that year;
// one of a year after a year over, on the year before.
func (m thresholdYears) add(rule string, year int, limit decimal.Decimal, index int64) {
	switch rule {
	case vat.ThresholdCrossed, vat.ThresholdCurrentYear:
	case vat.ThresholdPreviousYear:
		year--
	default:
		return
	}
	if !limit.IsPositive() {
		limit = decimal.NewFromInt(10000) // Art. 59c(1)(c), for a record that does not state it
	}
	y := m[year]
	if y == nil {
		y = &thresholdYear{limit: limit}
		m[year] = y
	}
	y.idx = append(y.idx, index)
}

// thresholdRefundReview says, per year the return's destination-taxed
// supplies rested on, when the refunds of supplies counted in that year
// (recorded below size) bring its total back within the limit.
func thresholdRefundReview(ctx context.Context, b *fiscal.Books, size int64, relied thresholdYears) ([]string, error) {
	if len(relied) == 0 {
		return nil, nil
	}
	totals, err := b.Totals(ctx)
	if err != nil {
		return nil, err
	}
	over := map[int]decimal.Decimal{}
	first := 0
	for _, t := range totals {
		y := relied[t.Year]
		total, err := decimal.NewFromString(t.CrossBorderEUR)
		if y == nil || err != nil || !total.GreaterThan(y.limit) {
			continue
		}
		over[t.Year] = total
		if first == 0 || t.Year < first {
			first = t.Year
		}
	}
	if len(over) == 0 {
		return nil, nil
	}
	reduced := map[int]decimal.Decimal{}
	byYear := map[int][]int64{}
	// A refund is dated on or after the day of the supply it refunds, in
	// the taxing state's time zone: from the last day of the year before,
	// for the seller's own time zone.
	err = refunds.ByDate(ctx, b, strconv.Itoa(first-1)+"-12-31", "", func(rf *refunds.Refund, _ []byte) error {
		th := rf.Classification.Threshold
		if rf.Ledger.Index >= size || th == nil || !th.Counts || th.Counted == nil {
			return nil
		}
		if _, ok := over[th.Year]; !ok {
			return nil
		}
		net, err := dec(rf.FX.NetEURExact)
		if rf.FX.NetEURExact == "" {
			net, err = dec(rf.FX.NetEUR)
		}
		if err != nil {
			return unreadable(rf.ID, err)
		}
		reduced[th.Year] = reduced[th.Year].Add(net) // negative: the correction
		byYear[th.Year] = append(byYear[th.Year], rf.Ledger.Index)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, year := range sortedInts(over) {
		y, total := relied[year], over[year]
		net := total.Add(reduced[year])
		if len(byYear[year]) == 0 || net.GreaterThan(y.limit) {
			continue
		}
		slices.Sort(byYear[year])
		slices.Sort(y.idx)
		out = append(out, fmt.Sprintf("refunds of supplies counted toward the Art. 59c threshold of %d (ledger indexes %v) reduce their taxable amount (Art. 90(1) Directive 2006/112/EC) by EUR %s: "+
			"net of them the year's cross-border supplies total EUR %s, not over EUR %s, while the EUR %s recorded went over it (Art. 59c(1)(c)); "+
			"%d supplies in this return's lines (ledger indexes %v) were taxed in the member state of consumption because %d was over the threshold (Art. 59c(2)), and the engine does not revise them: "+
			"check where they were supplied (Art. 58, or Art. 45 where the seller is established) before filing",
			year, byYear[year], reduced[year].Neg().StringFixed(2), net.StringFixed(2), y.limit.String(), total.StringFixed(2), len(y.idx), y.idx, year))
	}
	return out, nil
}

func sortedInts[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

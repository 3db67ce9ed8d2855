package refunds

import (
	"cmp"
	"context"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
)

// ThresholdReduction sums, per Art. 59c threshold year from year from on,
// the account's refunds of supplies counted toward that year's total (the
// supply's threshold section, which the refund repeats, counts it): their
// net EUR amount, exclusive of VAT, as a positive reduction. A refund
// reduces the taxable amount of the supply it refunds (Art. 90(1)
// Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112),
// and the threshold is "the total value, exclusive of VAT" of the supplies
// (Art. 59c(1)(c)); the engine's running totals are what each sale was
// decided on and are not lowered by it (fiscal.Books.Totals). A refund
// is dated on or after its supply's day in the taxing state, so the scan
// starts on the last day of the year before from.
func ThresholdReduction(ctx context.Context, b *fiscal.Books, from int) (map[int]decimal.Decimal, error) {
	out := map[int]decimal.Decimal{}
	err := ByDate(ctx, b, strconv.Itoa(from-1)+"-12-31", "", func(rf *Refund, _ []byte) error {
		th := rf.Classification.Threshold
		if th == nil || !th.Counts || th.Counted == nil || th.Year < from {
			return nil
		}
		net, err := decimal.NewFromString(cmp.Or(rf.FX.NetEURExact, rf.FX.NetEUR))
		if err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored refund " + rf.ID + " has an unreadable EUR amount", Err: err}
		}
		out[th.Year] = out[th.Year].Add(net.Abs())
		return nil
	})
	return out, err
}

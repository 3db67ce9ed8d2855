package parties

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// AccountTotals are the account's Art. 59c running totals (its opening
// figures included, fiscal.Books.Totals) for the year of at in the
// seller's time zone and the year before: what the engine decides the
// account's own sale on (fiscal totals.go), for an EU seller established
// in one member state only (Art. 59c(1)(a) Directive 2006/112/EC); nil for
// any other seller, which has no threshold. The previews of the account's
// own sale (sandbox, capability check) read them and never count.
func AccountTotals(ctx context.Context, b *fiscal.Books, seller SellerFacts, at time.Time) (*vat.CrossBorderTotals, error) {
	if !InEU27(seller.Country) || len(seller.OtherEstablishments) > 0 {
		return nil, nil
	}
	years, err := b.Totals(ctx)
	if err != nil {
		return nil, err
	}
	y := vat.Seller{Country: seller.Country}.ThresholdYear(at)
	cb := &vat.CrossBorderTotals{}
	for _, t := range years {
		if t.Year != y && t.Year != y-1 {
			continue
		}
		d, err := decimal.NewFromString(t.CrossBorderEUR)
		if err != nil {
			return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the account's running total is unreadable", Err: err}
		}
		if t.Year == y {
			cb.CurrentYear = d
		} else {
			cb.PreviousYear = d
		}
	}
	return cb, nil
}

package parties

import (
	"context"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// AccountTotals are the account's Art. 59c running totals (its opening
// figures included) for the year of at in the seller's time zone and the
// year before, with the dates the engine keeps of the supplies it counted
// (vat.CrossBorderTotals.LatestCounted, CrossedAt): exactly what the engine
// decides the account's own sale dated at on (fiscal.Books.CrossBorder),
// for an EU seller established in one member state only (Art. 59c(1)(a)
// Directive 2006/112/EC, vat.SubjectToThreshold); nil for any other seller, which has no
// threshold. The previews of the account's own sale (sandbox, capability
// check) read them and never count, so that a preview of a sale recorded
// out of its time order says what recording will (threshold_order_in_doubt
// when the dates leave in doubt whether the year was over when the sale was
// made: Art. 59c(2), Art. 58 applies "as of that time").
func AccountTotals(ctx context.Context, b *fiscal.Books, seller SellerFacts, at time.Time) (*vat.CrossBorderTotals, error) {
	if !vat.SubjectToThreshold(seller.Country, seller.OtherEstablishments) {
		return nil, nil // the engine's own rule (a Monaco seller is French, Art. 7(1))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.CrossBorder(at)
}

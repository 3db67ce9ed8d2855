package catalog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCheckSellerInSpecialTerritory: a seller established in the Canary
// Islands (IC) or in Ceuta and Melilla (EA), outside the EU VAT territory
// although in Spain (Art. 6(1)(b) Directive 2006/112/EC), is a seller
// POST /v1/fiscal-events records (left for review,
// seller_in_special_territory). The corridor check answers the same for the
// same facts (README "Territories, conditional rates, corridors"), not 400
// for a seller_country it does not read.
func TestCheckSellerInSpecialTerritory(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	events := fiscalevent.New(e.Engine)
	ctx := context.Background()
	for i, seller := range []string{"IC", "EA"} {
		r := fiscaltest.Request(9500+i, "11.90", "", checkNow.Add(-24*time.Hour).Format(time.RFC3339))
		res, err := events.Record(ctx, fiscaltest.AccountID(0), fiscalevent.Request{
			Payment: fiscalevent.Payment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp, PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
			Seller:  parties.Seller{LegalName: "Isleño SL", Country: seller}, Buyer: parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: vat.KindDigitalService},
		}, "")
		if err != nil {
			t.Fatalf("fiscal event of a seller in %s: %v", seller, err)
		}
		c, err := e.CheckCapabilities(ctx, "", check(seller, "DE", "B2C", "x402", "eip155:8453"))
		if err != nil {
			t.Fatalf("check of a seller in %s: %v", seller, err)
		}
		d := c.DeterminationCoverage
		codes := append(reasonCodes(d.Reasons), reasonCodes(d.Classification.Reasons)...)
		if d.Classification == nil || d.Classification.Status != res.Event.Determination.Status || !slices.Contains(codes, vat.ReasonSellerSpecialTerritory) {
			t.Errorf("seller in %s: check %s %v, the event %s", seller, d.Status, codes, res.Event.Determination.Status)
		}
	}
}

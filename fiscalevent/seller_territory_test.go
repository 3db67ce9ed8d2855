package fiscalevent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSellerInCanaryIslandsOrCeutaMelilla: a seller established in the
// Canary Islands (IC) or in Ceuta and Melilla (EA) is outside the EU VAT
// territory although in Spain (Art. 6(1)(b) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112), so
// it is not a Spanish seller: stating "ES" would apply the Art. 59c
// threshold and the Union scheme, which such a seller has no access to
// (Art. 358a(1), 369a). The event takes the codes the buyer's country
// takes for these territories (ISO 3166-1 exceptionally reserved IC and EA)
// and is left for review with seller_in_special_territory, as a seller in
// Åland or an outermost region is, never determined by a guess.
func TestSellerInCanaryIslandsOrCeutaMelilla(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	for i, c := range []struct{ seller, buyer string }{{"IC", "DE"}, {"ic", "ES"}, {"EA", "FR"}, {"AX", "DE"}} {
		res, err := events.Record(context.Background(), fiscaltest.AccountID(0), request(700+i, "11.90", "Isleño SL", c.seller, c.buyer), "")
		if err != nil {
			t.Fatalf("seller %s: %v", c.seller, err)
		}
		ev := res.Event
		d := ev.Determination
		var codes []string
		for _, r := range d.Reasons {
			codes = append(codes, r.Code)
		}
		if d.Status != vat.StatusManualReview || !slices.Contains(codes, vat.ReasonSellerSpecialTerritory) || d.RatePercent != nil || ev.Receipt != nil || ev.Invoice != nil {
			t.Errorf("seller %s to %s: %s %s rate %v reasons %v receipt %v", c.seller, c.buyer, d.Status, d.Regime, d.RatePercent, codes, ev.Receipt != nil)
		}
	}
}

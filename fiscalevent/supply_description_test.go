package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestUncoveredSupplyGetsNoServiceDescription: a fiscal event of a seller
// that is not the account whose supply kind is not an electronically
// supplied service (goods, a consulting service: Art. 58 and Annex II
// Directive 2006/112/EC cover only the former) and which states no
// description must not be recorded as a "Digital service": the stored
// supply would misstate what was sold. The kind is left for review
// (supply_kind_not_covered) and the description stays as stated, empty. A
// covered kind without a description still takes the default, and the
// account's own sale takes the account's item name whatever its kind, as
// its settlements do (its invoice line needs a name, BT-153).
func TestUncoveredSupplyGetsNoServiceDescription(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	record := func(n int, kind, sellerName, sellerCountry string) *fiscalevent.Event {
		req := request(n, "11.90", sellerName, sellerCountry, "DE")
		req.Supply.Kind = kind
		res, err := events.Record(ctx, fiscaltest.AccountID(0), req, "")
		if err != nil {
			t.Fatalf("%s from %s: %v", kind, sellerCountry, err)
		}
		return res.Event
	}
	for i, kind := range []string{"goods", "consulting"} {
		ev := record(760+i, kind, "Acme Widgets Inc", "US")
		if ev.Supply.Description != "" {
			t.Errorf("%s from a foreign seller: description %q stored for a supply stating none", kind, ev.Supply.Description)
		}
		if ev.Determination.Status != vat.StatusManualReview || ev.Receipt != nil {
			t.Errorf("%s: %s, receipt %v", kind, ev.Determination.Status, ev.Receipt != nil)
		}
	}
	if ev := record(770, vat.KindSaaS, "Acme Widgets Inc", "US"); ev.Supply.Description == "" {
		t.Errorf("saas from a foreign seller: no default description")
	}
	own := record(771, vat.KindSaaS, fiscaltest.IrishSeller.LegalName, "IE").Supply.Description
	if goods := record(772, "goods", fiscaltest.IrishSeller.LegalName, "IE").Supply.Description; own == "" || goods != own {
		t.Errorf("the account's own sale: goods described %q, saas %q; want the account's item name for both", goods, own)
	}
}

package fiscalevent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMonacoConsumerGetsAProductionReceipt: a consumer in Monaco is, for
// VAT, a consumer in France (Art. 7(1) Directive 2006/112/EC); Determine
// taxes the supply in France under the EU ruleset, exactly as for a
// consumer in France, and a settlement to such a consumer gets its
// production receipt. The fiscal event's buyer_in_eu invariant read the
// raw code MC against the EU-27 and refused the receipt. A consumer in the
// Isle of Man, treated as the UK, stays outside it.
func TestMonacoConsumerGetsAProductionReceipt(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	for i, c := range []struct{ treated, as string }{{"MC", "FR"}, {"IM", "GB"}} {
		var got [2]*fiscalevent.Event
		for j, cc := range []string{c.as, c.treated} {
			res, err := events.Record(context.Background(), fiscaltest.AccountID(0), request(10*i+j, "11.90", fiscaltest.IrishSeller.LegalName, "IE", cc), "")
			if err != nil {
				t.Fatal(err)
			}
			got[j] = res.Event
		}
		parent, treated := got[0], got[1]
		if treated.Determination.TaxingCountry != parent.Determination.TaxingCountry || treated.Determination.Jurisdiction != parent.Determination.Jurisdiction {
			t.Fatalf("%s: determined %+v, %s %+v", c.treated, treated.Determination, c.as, parent.Determination)
		}
		if treated.Production.Receipt != parent.Production.Receipt || (treated.Receipt != nil) != (parent.Receipt != nil) {
			t.Errorf("consumer in %s: production %+v; in %s, taxed alike: %+v", c.treated, treated.Production, c.as, parent.Production)
		}
		if c.as == "FR" && (!treated.Production.Receipt || treated.Determination.Jurisdiction != vat.JurisdictionEU) {
			t.Errorf("consumer in Monaco: production %+v, want the receipt of a supply taxed in France", treated.Production)
		}
		if inv := treated.Production.Invariants[2]; inv.Code == fiscalevent.InvariantBuyerInEU && inv.Holds && !strings.Contains(inv.Detail, "treated as "+c.as) {
			t.Errorf("consumer in %s: %s holds, its detail %q does not say it is treated as %s", c.treated, inv.Code, inv.Detail, c.as)
		}
	}
}

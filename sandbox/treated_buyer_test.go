package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
)

// TestEvaluatePreviewsAMonacoConsumer: a consumer in Monaco is, for VAT, a
// consumer in France (Art. 7(1) Directive 2006/112/EC), and a settlement
// to one is taxed in France like a sale to a French consumer. The preview
// covers attested EU customers; it read the raw code MC against the list
// of member states and refused the customer (UNSUPPORTED_JURISDICTION).
// It now previews it as Determine decides it, taxed in France; a consumer
// in the Isle of Man, treated as the UK, is still refused, as a British
// one is.
func TestEvaluatePreviewsAMonacoConsumer(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	sb := sandbox.New(e, sandbox.Options{})
	evaluate := func(cc string) (*sandbox.Evaluation, error) {
		return sb.Evaluate(context.Background(), fiscaltest.AccountID(0), "", sandbox.EvaluateRequest{
			Buyer: parties.Buyer{Country: cc}, Supply: parties.Supply{Kind: "digital_service"}, AmountUSDC: "11.90", Date: "2026-04-10",
		})
	}
	for _, c := range []struct{ treated, as string }{{"MC", "FR"}, {"IM", "GB"}} {
		parent, perr := evaluate(c.as)
		treated, terr := evaluate(c.treated)
		var pe, te *fiscal.Error
		if errors.As(perr, &pe) != errors.As(terr, &te) || pe != nil && te != nil && pe.Code != te.Code {
			t.Errorf("consumer in %s: %v; in %s: %v", c.treated, terr, c.as, perr)
			continue
		}
		if perr != nil || terr != nil {
			continue
		}
		if d, p := treated.Determination, parent.Determination; d.Status != p.Status || d.TaxingCountry != p.TaxingCountry || d.Regime != p.Regime {
			t.Errorf("consumer in %s: %s %s %s; in %s: %s %s %s", c.treated, d.Status, d.Regime, d.TaxingCountry, c.as, p.Status, p.Regime, p.TaxingCountry)
		}
	}
	if _, err := evaluate("MC"); err != nil {
		t.Errorf("consumer in Monaco refused: %v", err)
	}
}

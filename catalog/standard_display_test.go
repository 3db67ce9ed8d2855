package catalog_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/catalog"
)

// TestPublishedStandardRateFollowsItsBasisPoints: a deployment with its own
// standard fee (catalog.New(engine, pricing) with StandardFeeBPS set)
// publishes the display rate of those basis points in GET /v1/pricing
// (standard.display_rate) and GET /v1/seller-value, never the default's
// "0.5%" beside another fee_bps.
func TestPublishedStandardRateFollowsItsBasisPoints(t *testing.T) {
	for bps, want := range map[int64]string{30: "0.3%", 75: "0.75%", 100: "1%"} {
		p := catalog.DefaultPricing()
		p.StandardFeeBPS = bps
		pub := p.Published()
		if pub.Standard.FeeBPS != bps || pub.Standard.DisplayRate != want {
			t.Errorf("standard %d bps published as fee_bps %d, display_rate %q; want %q", bps, pub.Standard.FeeBPS, pub.Standard.DisplayRate, want)
		}
		p.BetaActive = false
		if pub := p.Published(); pub.CurrentFeeBPS != bps || pub.CurrentDisplayRate != want {
			t.Errorf("after the beta, %d bps published as current %d, %q; want %q", bps, pub.CurrentFeeBPS, pub.CurrentDisplayRate, want)
		}
	}
}

package httpserver

import (
	"slices"
	"testing"

	"github.com/fiscal402/fiscal402/catalog"
)

// TestPricingIngestAuthListsEveryIngestRoute: GET /v1/pricing's ingest_auth
// names the endpoints on which the key is required because it picks the
// seller whose records are made. Every route that records a payment (the
// ingest routes the metrics count, a resolution of an existing record
// aside) must be in it, or an x402 facilitator reading the policy is told
// its own ingest endpoint is not one.
func TestPricingIngestAuthListsEveryIngestRoute(t *testing.T) {
	listed := catalog.DefaultPricing().Published().IngestAuth.Endpoints
	for route, source := range ingestSources {
		if source == "resolve" {
			continue
		}
		if !slices.Contains(listed, route) {
			t.Errorf("ingest route %q (source %s) is not in the published ingest_auth.endpoints %v", route, source, listed)
		}
	}
	for _, ep := range listed {
		if _, ok := ingestSources[ep]; !ok {
			t.Errorf("ingest_auth.endpoints lists %q, which is not an ingest route", ep)
		}
	}
}

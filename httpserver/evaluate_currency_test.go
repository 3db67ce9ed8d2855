package httpserver_test

import (
	"slices"
	"testing"
)

// TestEvaluateCurrencyRefusalDocumented: the preview is in USDC, and a
// request naming another currency is refused 422 UNSUPPORTED_ASSET at
// /currency (sandbox.Evaluate). The OpenAPI operation listed only
// UNSUPPORTED_JURISDICTION under 422, so the answer broke the document a
// client is generated from.
func TestEvaluateCurrencyRefusalDocumented(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	r := f.do("POST", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(map[string]any{"currency": "EUR"})))
	assertProblem(t, r, 422, "UNSUPPORTED_ASSET", "/currency")
	if codes := doc.documentedCodes(t, "POST", "/v1/compliance/evaluate", 422); !slices.Contains(codes, "UNSUPPORTED_ASSET") {
		t.Errorf("POST /v1/compliance/evaluate answers 422 UNSUPPORTED_ASSET; the document lists %v", codes)
	}
	assertDocumented(t, doc, "POST", "/v1/compliance/evaluate", r)
}

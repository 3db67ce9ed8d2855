package httpserver_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestListParamsDocumented: every query parameter a listing answers 200
// to is declared on its operation in the OpenAPI document, so a client
// generated from the document knows every filter the server applies.
// GET /settlements read status as an undocumented alias of reviewStatus
// (PROCESSED or PENDING_MANUAL_REVIEW): it is kept, since clients follow
// the review queue with ?status=PENDING_MANUAL_REVIEW, and declared
// deprecated in favour of reviewStatus (OpenAPI 3.1, Parameter Object
// "deprecated": https://spec.openapis.org/oas/v3.1.0#parameter-object).
func TestListParamsDocumented(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	lists := map[string]map[string]string{
		"/settlements": {"limit": "1", "from": "2026-01-01", "to": "2026-12-31", "settledFrom": "2026-01-01", "settledTo": "2026-12-31",
			"reviewStatus": "PROCESSED", "status": "PENDING_MANUAL_REVIEW", "taxingCountry": "DE"},
		"/v1/fiscal-events": {"limit": "1", "from": "2026-01-01", "to": "2026-12-31", "settledFrom": "2026-01-01", "settledTo": "2026-12-31",
			"reviewStatus": "PROCESSED", "status": "DETERMINED", "taxingCountry": "DE"},
	}
	for path, params := range lists {
		op := doc["paths"].(map[string]any)[path].(map[string]any)["get"].(map[string]any)
		declared := map[string]map[string]any{}
		for _, p := range op["parameters"].([]any) {
			if m := p.(map[string]any); m["in"] == "query" {
				declared[m["name"].(string)] = m
			}
		}
		for name, value := range params {
			r := f.do("GET", path+"?"+url.Values{name: {value}}.Encode(), keyA, nil)
			if r.status == http.StatusOK && declared[name] == nil {
				t.Errorf("GET %s?%s=%s is answered 200, but the document does not declare %q", path, name, value, name)
			}
		}
	}
	op := doc["paths"].(map[string]any)["/settlements"].(map[string]any)["get"].(map[string]any)
	for _, p := range op["parameters"].([]any) {
		if m := p.(map[string]any); m["name"] == "status" && m["deprecated"] != true {
			t.Errorf("GET /settlements status is declared without deprecated: true (it is an alias of reviewStatus): %v", m)
		}
	}
}

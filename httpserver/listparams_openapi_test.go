package httpserver_test

import (
	"net/http"
	"net/url"
	"strings"
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

// TestListUpperBoundInclusiveAsDocumented: to and settledTo given as an
// instant keep a record at exactly that instant (the README: the bounds
// are inclusive; listing.Query and returns.ExportQuery apply them so), and
// the OpenAPI document says so. It described them as "before this
// instant", which a client would read as exclusive and then ask for the
// next page's lower bound at the same instant, getting the record twice.
func TestListUpperBoundInclusiveAsDocumented(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if r.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	rec := r.json(t)
	created := rec["createdAt"].(string)
	settled := rec["settlement"].(map[string]any)["timestamp"].(string)
	for _, q := range []url.Values{{"to": {created}}, {"settledTo": {settled}}, {"from": {created}, "to": {created}}} {
		page := f.do("GET", "/settlements?"+q.Encode(), keyA, nil)
		if page.status != http.StatusOK || len(page.json(t)["data"].([]any)) != 1 {
			t.Errorf("GET /settlements?%s: %d %s, want the record at that instant", q.Encode(), page.status, page.body)
		}
	}
	doc := f.openAPI(t)
	for _, path := range []string{"/settlements", "/v1/fiscal-events", "/settlements/export"} {
		op := doc["paths"].(map[string]any)[path].(map[string]any)["get"].(map[string]any)
		for _, p := range op["parameters"].([]any) {
			m := p.(map[string]any)
			if name := m["name"]; name == "to" || name == "settledTo" {
				if d := m["description"].(string); !strings.Contains(d, "at or before") {
					t.Errorf("GET %s %s: %q does not say the bound is inclusive (at or before)", path, name, d)
				}
			}
		}
	}
}

// TestEventsAfterDeprecatedFlag: GET /v1/events still reads after, the
// former name of cursor, and its description says it is deprecated; the
// parameter carries the machine-readable deprecated: true (OpenAPI 3.1
// Parameter Object), so generated clients warn about it as the prose does.
func TestEventsAfterDeprecatedFlag(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	if r := f.do("GET", "/v1/events?after=0", keyA, nil); r.status != http.StatusOK {
		t.Fatalf("GET /v1/events?after=0: %d %s", r.status, r.body)
	}
	op := f.openAPI(t)["paths"].(map[string]any)["/v1/events"].(map[string]any)["get"].(map[string]any)
	found := false
	for _, p := range op["parameters"].([]any) {
		if m := p.(map[string]any); m["name"] == "after" {
			found = true
			if m["deprecated"] != true {
				t.Errorf("GET /v1/events after: deprecated = %v, want true", m["deprecated"])
			}
		}
	}
	if !found {
		t.Error("GET /v1/events does not declare after, which it reads")
	}
}

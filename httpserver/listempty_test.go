package httpserver_test

import (
	"net/http"
	"testing"
)

// TestListEmptyParameterRefused: a filter or limit given with an empty
// value (?taxingCountry=, ?reviewStatus=, ?from=, ?limit=) is a 400 naming
// it on both listings, as GET /v1/events already answers ?limit=: a client
// whose variable came out empty must not get the unfiltered list as if it
// had asked for it (the README: a misspelt filter is never silently
// ignored). They were answered 200 with every record. An empty cursor
// still asks for the first page, as on GET /v1/events.
func TestListEmptyParameterRefused(t *testing.T) {
	f := newFixture(t)
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil))); r.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/settlements", "/v1/fiscal-events"} {
		for _, p := range []string{"limit", "from", "to", "settledFrom", "settledTo", "reviewStatus", "status", "taxingCountry"} {
			r := f.do("GET", path+"?"+p+"=", keyA, nil)
			if r.status != http.StatusBadRequest || r.json(t)["code"] != "BAD_REQUEST" || r.json(t)["field"] != p {
				t.Errorf("%s?%s=: %d %s, want 400 at %s", path, p, r.status, r.body, p)
			}
		}
		if r := f.do("GET", path+"?cursor=", keyA, nil); r.status != http.StatusOK {
			t.Errorf("%s?cursor=: %d %s, want the first page", path, r.status, r.body)
		}
	}
}

package httpserver_test

import (
	"net/http"
	"testing"
)

// TestEventsQueryNamesTheParameterSent: GET /v1/events reads its cursor
// from cursor or from after (the cursor's former name); a bad value is a
// 400 BAD_REQUEST whose field is the parameter the client sent (README
// "Errors": for input errors, field names the offending input; a query
// parameter's problem names the parameter), not the other name.
func TestEventsQueryNamesTheParameterSent(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ query, field string }{
		{"after=-1", "after"},
		{"after=x", "after"},
		{"after=01", "after"},
		{"cursor=x", "cursor"},
		{"limit=0", "limit"},
		{"cursor=1&after=1", "after"},
	} {
		r := f.do("GET", "/v1/events?"+tc.query, keyA, nil)
		t.Run(tc.query, func(t *testing.T) { assertProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", tc.field) })
	}
}

package httpserver_test

import "testing"

// TestEmptyQueryParameterRefusedEverywhere: a query parameter given empty
// is a 400 naming it, not read as absent, on the export and the OSS
// endpoints as on the listings (parseListQuery): GET
// /settlements/export?from= streamed every record of the account as if no
// bound had been asked, and GET /v1/returns/oss?...&memberStateOfIdentification=
// answered the default state's return, where GET /settlements?from= is a
// 400. The bad request writes nothing and is refused before any work.
func TestEmptyQueryParameterRefusedEverywhere(t *testing.T) {
	f := newFixture(t)
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil))); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for _, c := range []struct{ url, field string }{
		{"/settlements?from=", "from"}, // the listings' rule, for reference
		{"/settlements/export?from=", "from"},
		{"/settlements/export?to=", "to"},
		{"/settlements/export?format=", "format"},
		{"/settlements/export?from=2026-04-01&to=", "to"},
		{"/v1/returns/oss?period=2026-Q2&format=", "format"},
		{"/v1/returns/oss?period=2026-Q2&memberStateOfIdentification=", "memberStateOfIdentification"},
		{"/v1/returns/oss/records?period=2026-Q2&memberState=DE&format=", "format"},
	} {
		r := f.do("GET", c.url, keyA, nil)
		if r.status != 400 {
			t.Errorf("GET %s: %d %.120s, want 400 naming %s", c.url, r.status, r.body, c.field)
			continue
		}
		assertProblem(t, r, 400, "BAD_REQUEST", c.field)
	}
}

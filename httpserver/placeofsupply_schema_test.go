package httpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlaceOfSupplyCodesMatchTheDocument: a supply to a special territory
// has an ISO 3166-2 place of supply (ES-CN for the Canary Islands, PT-20
// for the Azores, GR-69 for Mount Athos: vat's territory table), which the
// record's classification, its location assessment and the OSS return's
// not-in-OSS summary carry. The OpenAPI document described those members as
// ISO 3166-1 alpha-2 only (^[A-Z]{2}$), so a client validating answers
// against it refused these real records.
func TestPlaceOfSupplyCodesMatchTheDocument(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	for i, c := range []struct{ country, postal string }{{"ES", "35001"}, {"PT", "9500-001"}, {"GR", "63086"}} {
		body := mustJSON(t, settlement(map[string]any{"txHash": txHash(930000 + i), "consumerCountry": c.country, "consumerPostalCode": c.postal}))
		r := f.do("POST", "/settlements", keyA, body)
		if r.status != 201 {
			t.Fatalf("%s %s: %d %s", c.country, c.postal, r.status, r.body)
		}
		var rec struct {
			ID             string
			Classification struct{ PlaceOfSupply string }
		}
		if err := json.Unmarshal(r.body, &rec); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rec.Classification.PlaceOfSupply, c.country+"-") {
			t.Fatalf("%s %s: place of supply %q, want a subdivision code of %s (the case this test is about)", c.country, c.postal, rec.Classification.PlaceOfSupply, c.country)
		}
		assertDocumented(t, doc, "POST", "/settlements", r)
		assertDocumented(t, doc, "GET", "/settlements/{id}", f.do("GET", "/settlements/"+rec.ID, keyA, nil))
	}
	ret := f.do("GET", "/v1/returns/oss?period=2026-Q2", keyA, nil)
	if ret.status != 200 || !strings.Contains(string(ret.body), `"ES-CN"`) {
		t.Fatalf("the return of 2026-Q2 does not summarise the Canary Islands sale: %d %s", ret.status, ret.body)
	}
	assertDocumented(t, doc, "GET", "/v1/returns/oss", ret)
}

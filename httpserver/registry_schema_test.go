package httpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestUnreadableVATNumberMatchesTheDocument: a buyer VAT number the syntax
// check refuses before any registry is asked (no readable country prefix,
// "garbage") is recorded with its registry answer, whose countryCode and
// registry are then empty (vies.Result). The OpenAPI document required
// countryCode to be two capital letters, so such a record, served by
// POST /settlements and GET /settlements/{id} (the bundled server's
// default, the registry off), broke its own schema.
func TestUnreadableVATNumberMatchesTheDocument(t *testing.T) {
	f := newFixtureWith(t, func(cfg *fiscal.Config) {
		svc, err := vies.New(vies.Config{Mode: vies.ModeOff, Service: vies.ServiceConfig{Syntax: vat.Syntax}})
		if err != nil {
			panic(err)
		}
		cfg.VIES = svc
	})
	doc := f.openAPIDocument(t)
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(931000), "consumerVatNumber": "garbage"})))
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var rec struct {
		ID    string
		Buyer struct{ Registry *vies.Result }
	}
	if err := json.Unmarshal(r.body, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Buyer.Registry == nil || rec.Buyer.Registry.Fault != vies.FaultSyntax || rec.Buyer.Registry.CountryCode != "" {
		t.Fatalf("registry answer %+v, want a syntax refusal without a country (the case this test is about)", rec.Buyer.Registry)
	}
	assertDocumented(t, doc, "POST", "/settlements", r)
	assertDocumented(t, doc, "GET", "/settlements/{id}", f.do("GET", "/settlements/"+rec.ID, keyA, nil))
}

package httpserver_test

import (
	"strings"
	"testing"
)

// TestVATNumberWithoutPrefix: POST /settlements with a German business's
// VAT number given without its prefix, against the real registry client
// (vies.Service with the syntax check, a stub VIES). The registry is asked
// about DE136695976 (the stub echoes what it was asked), the sale is
// reverse-charged as with the prefix, the record and the invoice state
// DE136695976 with the note that the prefix was supplied, and a retry with
// the same Idempotency-Key replays the record. Without consumerCountry no
// prefix is guessed: the registry is not asked and the record waits for
// the country.
func TestVATNumberWithoutPrefix(t *testing.T) {
	st := newVIESStub(t, "valid")
	f := newFixtureWith(t, withVIES(st))
	body := mustJSON(t, settlement(map[string]any{"txHash": txHash(1), "consumerVatNumber": "136 695 976"}))
	resp := f.do("POST", "/settlements", keyA, body, "Idempotency-Key", "prefixless-1")
	if resp.status != 201 {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	rec := resp.json(t)
	cl := rec["classification"].(map[string]any)
	buyer := rec["buyer"].(map[string]any)
	reg, _ := buyer["registry"].(map[string]any)
	if rec["reviewStatus"] != "PROCESSED" || cl["regime"] != "REVERSE_CHARGE_B2B" || buyer["vatNumber"] != germanBusiness ||
		reg["countryCode"] != "DE" || reg["vatNumber"] != "136695976" || reg["status"] != "valid" || st.calls.Load() != 1 {
		t.Fatalf("record %s %v, buyer %v, %d registry calls; want PROCESSED REVERSE_CHARGE_B2B on %s, asked once", rec["reviewStatus"], cl, buyer, st.calls.Load(), germanBusiness)
	}
	if !strings.Contains(string(resp.body), `"vat_number_prefix_supplied"`) {
		t.Errorf("no note vat_number_prefix_supplied: %v", cl["reasons"])
	}
	ubl := f.do("GET", rec["invoice"].(map[string]any)["url"].(string), keyA, nil)
	if !strings.Contains(string(ubl.body), "<cbc:CompanyID>"+germanBusiness+"</cbc:CompanyID>") {
		t.Errorf("the invoice does not state the buyer's VAT number %s", germanBusiness)
	}
	again := f.do("POST", "/settlements", keyA, body, "Idempotency-Key", "prefixless-1")
	if again.status/100 != 2 || again.json(t)["id"] != rec["id"] || st.calls.Load() != 1 {
		t.Errorf("retry with the key: %d %s, %d registry calls; want the record %s replayed", again.status, again.body, st.calls.Load(), rec["id"])
	}
	none := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(2), "consumerVatNumber": "136695976", "consumerCountry": nil})))
	if none.status != 201 {
		t.Fatalf("without a country: status %d: %s", none.status, none.body)
	}
	if r := none.json(t); r["reviewStatus"] != "PENDING_MANUAL_REVIEW" || r["buyer"].(map[string]any)["vatNumber"] != "136695976" || st.calls.Load() != 1 ||
		!strings.Contains(string(none.body), `"buyer_country_missing"`) {
		t.Errorf("without a country: %s, buyer %v, %d registry calls; want review for the country, the number as sent, no registry call", r["reviewStatus"], r["buyer"], st.calls.Load())
	}
}

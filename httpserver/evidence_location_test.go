package httpserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestEvidenceAloneLocatesTheBuyer: POST /settlements with two agreeing
// items of location evidence and no consumerCountry (Art. 24b(d)
// Implementing Regulation (EU) No 282/2011) is decided where the items place
// the customer and gets its invoice, whose buyer address states that
// country (BR-11). It was PENDING_MANUAL_REVIEW with invoice_rules_failed
// (BR-11: the buyer's country missing) although the country was settled.
func TestEvidenceAloneLocatesTheBuyer(t *testing.T) {
	f := newFixture(t)
	evidence := []any{
		map[string]any{"kind": "billing_address", "country": "AT", "source": "customer"},
		map[string]any{"kind": "ip_address", "country": "AT", "source": "merchant"},
	}
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil, "locationEvidence": evidence})))
	if r.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	rec := r.json(t)
	c := rec["classification"].(map[string]any)
	if rec["reviewStatus"] != "PROCESSED" || c["taxingCountry"] != "AT" || c["locationEvidence"].(map[string]any)["rule"] != "two_items" {
		t.Fatalf("want PROCESSED, taxed in AT on two items: %s %v %v", rec["reviewStatus"], rec["reviewReasons"], c["taxingCountry"])
	}
	ubl := f.do("GET", "/settlements/"+rec["id"].(string)+"/ubl", keyA, nil)
	buyer, _, _ := strings.Cut(string(ubl.body[strings.Index(string(ubl.body), "<cac:AccountingCustomerParty>"):]), "</cac:AccountingCustomerParty>")
	if ubl.status != http.StatusOK || !strings.Contains(buyer, "<cbc:IdentificationCode>AT</cbc:IdentificationCode>") {
		t.Errorf("invoice: %d, buyer party %s", ubl.status, buyer)
	}
}

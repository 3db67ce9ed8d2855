package httpserver_test

import (
	"encoding/json"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// Issue 17 over HTTP: territories, conditional rates, IC/EA and location
// evidence through POST /settlements, with the record, the served receipt
// and the served invoice checked.
func TestTerritoriesConditionsEvidenceOverHTTP(t *testing.T) {
	f := newFixture(t)
	post := func(n int, key string, o map[string]any) fiscal.Record {
		t.Helper()
		o["txHash"] = txHash(910000 + n)
		r := f.do("POST", "/settlements", key, mustJSON(t, settlement(o)))
		if r.status != 201 {
			t.Fatalf("%v: %d %s", o, r.status, r.body)
		}
		var rec fiscal.Record
		if err := json.Unmarshal(r.body, &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	codes := func(r fiscal.Record) []string {
		var out []string
		for _, x := range r.ReviewReasons {
			out = append(out, x.Code)
		}
		return out
	}
	receiptOf := func(r fiscal.Record) string {
		t.Helper()
		rc := f.do("GET", "/v1/receipts/"+r.Receipt.ID, "", nil)
		if rc.status != 200 {
			t.Fatalf("receipt %s: %d", r.Receipt.ID, rc.status)
		}
		return string(rc.body)
	}

	// Territories: category O, the local tax in the record, the receipt and the invoice.
	for i, c := range []struct{ country, postal, tax string }{
		{"ES", "35001", "IGIC"}, {"IC", "", "IGIC"}, {"EA", "", "IPSI"}, {"FR", "97110", "TVA DOM"},
		{"DE", "78266", "Swiss VAT"}, {"IT", "22061", "ILCC"}, {"IT", "23041", "Livigno"}, {"DE", "27498", "Heligoland"},
		{"GR", "63086", "Mount Athos"}, {"AX", "", "Åland"},
	} {
		o := map[string]any{"consumerCountry": c.country}
		if c.postal != "" {
			o["consumerPostalCode"] = c.postal
		}
		r := post(i, keyB, o)
		d := r.Classification
		if r.ReviewStatus != fiscal.StatusProcessed || d.Category != vat.CategoryOutsideScope || d.LocalTax == nil || !strings.Contains(d.LocalTax.Name, c.tax) {
			t.Errorf("%s/%s: %s %v %s %+v, want O naming %s", c.country, c.postal, r.ReviewStatus, codes(r), d.Category, d.LocalTax, c.tax)
			continue
		}
		note := "Local tax: " + d.LocalTax.Name
		if rc := receiptOf(r); !strings.Contains(rc, jsonEscape(note)) {
			t.Errorf("%s/%s: the served receipt does not state %q", c.country, c.postal, note)
		}
		ubl := f.do("GET", "/settlements/"+r.ID+"/ubl", keyB, nil)
		if ubl.status != 200 || !strings.Contains(html.UnescapeString(string(ubl.body)), note) {
			t.Errorf("%s/%s: invoice %d does not state %q", c.country, c.postal, ubl.status, note)
		}
	}
	// The account-level choice of review is tested through the engine
	// (fiscal/territory_test.go); the HTTP accounts file carries it as
	// seller.reviewSpecialTerritories.

	// Conditional rates: attested, not attested.
	r := post(20, keyB, map[string]any{"consumerCountry": "FR", "supplyKind": "epublication"})
	if r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codes(r), vat.ReasonRateConditionUnattested) || r.Classification.RatePercent != nil {
		t.Errorf("FR e-press without CPPAP: %s %v", r.ReviewStatus, codes(r))
	}
	r = post(21, keyB, map[string]any{"consumerCountry": "FR", "supplyKind": "epublication", "rateConditions": []string{vat.ConditionFRPressCPPAP}})
	if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.RatePercent == nil || r.Classification.RatePercent.Decimal().String() != "2.1" {
		t.Errorf("FR e-press with CPPAP: %s %v %v", r.ReviewStatus, codes(r), r.Classification.RatePercent)
	}
	bad := f.do("POST", "/settlements", keyB, mustJSON(t, settlement(map[string]any{"txHash": txHash(910022), "rateConditions": []string{"isbn"}})))
	assertProblem(t, bad, 400, "BAD_REQUEST", "/rateConditions/0")

	// Location evidence: agreeing, contradicting (items listed, values hashed in the receipt).
	ev := func(kind, country, source, value string) map[string]any {
		return map[string]any{"kind": kind, "country": country, "source": source, "provider": "test", "value": value}
	}
	r = post(30, keyA, map[string]any{"consumerCountry": "DE", "locationEvidence": []any{
		ev("billing_address", "DE", "customer", "Unter den Linden 1"), ev("ip_address", "DE", "merchant", "203.0.113.7")}})
	if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.LocationEvidence == nil || r.Classification.LocationEvidence.Rule != vat.EvidenceRuleTwoItems {
		t.Errorf("agreeing evidence: %s %v %+v", r.ReviewStatus, codes(r), r.Classification.LocationEvidence)
	}
	r = post(31, keyA, map[string]any{"consumerCountry": "DE", "locationEvidence": []any{
		ev("billing_address", "DE", "customer", "Unter den Linden 1"), ev("ip_address", "FR", "merchant", "198.51.100.9")}})
	if r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codes(r), vat.ReasonLocationEvidenceContradictory) ||
		len(r.Buyer.Evidence) != 2 || r.Classification.LocationEvidence == nil || len(r.Classification.LocationEvidence.Items) != 2 {
		t.Errorf("contradicting evidence: %s %v %+v", r.ReviewStatus, codes(r), r.Classification.LocationEvidence)
	}
	rc := receiptOf(r)
	if strings.Contains(rc, "198.51.100.9") || strings.Contains(rc, "Unter den Linden") || !strings.Contains(rc, "location_evidence") {
		t.Errorf("the receipt of the contradicting record shows a personal value in clear or lacks the items:\n%s", rc)
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

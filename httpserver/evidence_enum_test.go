package httpserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestEvidenceKindAndSourceRefused: an item of location evidence whose kind
// or source is not one the API lists is a 400 naming it, and nothing is
// recorded (the payment can then be posted correctly). It was answered 201
// with a ledger record PENDING_MANUAL_REVIEW (location_evidence_invalid)
// claiming the payment, while an unknown country in the same item was
// already a 400.
func TestEvidenceKindAndSourceRefused(t *testing.T) {
	f := newFixture(t)
	count := func() int {
		r := f.do("GET", "/settlements?limit=200", keyA, nil)
		if r.status != http.StatusOK {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		return len(r.json(t)["data"].([]any))
	}
	item := func(kind, source string) map[string]any {
		return map[string]any{"kind": kind, "country": "DE", "source": source}
	}
	for _, c := range []struct {
		evidence []any
		field    string
	}{
		{[]any{item("gps", "merchant"), item("ip_address", "merchant")}, "/locationEvidence/0/kind"},
		{[]any{item("billing_address", "customer"), item("ip_address", "geoip")}, "/locationEvidence/1/source"},
	} {
		r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"locationEvidence": c.evidence})))
		if r.status != http.StatusBadRequest || r.json(t)["code"] != "BAD_REQUEST" || r.json(t)["field"] != c.field {
			t.Errorf("%v: %d %s, want 400 BAD_REQUEST at %s", c.evidence, r.status, r.body, c.field)
		}
		if n := count(); n != 0 {
			t.Fatalf("a refused request left %d records", n)
		}
	}
	good := []any{item("billing_address", "customer"), item("ip_address", "merchant")}
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"locationEvidence": good}))); r.status != http.StatusCreated || r.json(t)["reviewStatus"] != "PROCESSED" {
		t.Errorf("the same payment with valid evidence: %d %s", r.status, r.body)
	}
}

// TestOneThirdPartyItemNeedsCoveringTotals: acct_a states it is over the
// Art. 59c threshold (overThreshold) with no opening totals, so the ledger's
// totals (this test's one sale) cannot show its cross-border supplies within
// the EUR 100,000 of Art. 24b(d) second subparagraph: one third-party item
// is insufficient and the sale waits for review, naming why. It was
// PROCESSED on rule one_item_below_limit. Two items still settle it.
func TestOneThirdPartyItemNeedsCoveringTotals(t *testing.T) {
	f := newFixture(t)
	card := map[string]any{"kind": "payment_card", "country": "DE", "source": "third_party", "provider": "card acquirer"}
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"locationEvidence": []any{card}})))
	rec := r.json(t)
	if r.status != http.StatusCreated || rec["reviewStatus"] != "PENDING_MANUAL_REVIEW" {
		t.Fatalf("one card item: %d %s %v, want 201 PENDING_MANUAL_REVIEW", r.status, rec["reviewStatus"], rec["reviewReasons"])
	}
	rs := rec["reviewReasons"].([]any)
	if rs[0].(map[string]any)["code"] != "location_evidence_insufficient" || !strings.Contains(rs[0].(map[string]any)["detail"].(string), "overThreshold") {
		t.Errorf("reasons %v, want location_evidence_insufficient naming overThreshold", rs)
	}
	ip := map[string]any{"kind": "ip_address", "country": "DE", "source": "merchant"}
	r = f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(2), "locationEvidence": []any{card, ip}})))
	if rec := r.json(t); r.status != http.StatusCreated || rec["reviewStatus"] != "PROCESSED" {
		t.Errorf("two items: %d %v %v", r.status, rec["reviewStatus"], rec["reviewReasons"])
	}
}

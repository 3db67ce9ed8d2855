package httpserver_test

import "testing"

// TestRefundEmptyAmountIsRefused: "amountUsdc" given as an empty string is
// no amount (the published RefundRequest schema's pattern refuses it), not
// the absent member that asks for everything that remains. A review found
// {"amountUsdc":""} answered 201 with a full refund of the settlement: a
// client whose amount came out empty refunded the whole sale, credit note
// and all, which no later request can undo. Only an absent amount refunds
// the rest.
func TestRefundEmptyAmountIsRefused(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if created.status != 201 {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	path := "/settlements/" + id + "/refunds"
	for _, body := range []string{`{"amountUsdc":""}`, `{"reason":"r","amountUsdc":""}`, `{"amountUsdc":null}`, `{"reason":"r","amountUsdc": null }`} {
		p := problemCode(t, f.do("POST", path, keyA, []byte(body)), 400, "BAD_REQUEST")
		if p["field"] != "/amountUsdc" {
			t.Errorf("%s: problem %v", body, p)
		}
	}
	rec := f.do("GET", "/settlements/"+id, keyA, nil).json(t)
	if _, ok := rec["refunds"]; ok {
		t.Fatalf("refused requests recorded refunds: %v", rec["refunds"])
	}
	// Absent, it still refunds everything that remains.
	full := f.do("POST", path, keyA, []byte(`{"reason":"r"}`))
	if full.status != 201 || full.json(t)["full"] != true {
		t.Fatalf("full refund %d %s", full.status, full.body)
	}
}

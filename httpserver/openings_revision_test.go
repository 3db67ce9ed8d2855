package httpserver_test

import (
	"net/http"
	"testing"

	"github.com/fiscal402/fiscal402/receipt"
)

// TestOpeningsOfRecordIDAreTheCurrentReceipts: GET /v1/receipts/{record id}
// answers the record's current receipt (a revision replaces it), so GET
// /v1/receipts/{record id}/openings must answer that receipt's openings:
// an auditor handed the two with the same id must be able to open the
// receipt. Before the fix the openings were those of the first revision,
// whose salts open none of the current receipt's commitments.
func TestOpeningsOfRecordIDAreTheCurrentReceipts(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil})))
	if created.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops"}`))
	if r.status != http.StatusCreated {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	current := r.json(t)["receipt"].(map[string]any)["id"].(string)
	if current == "rcpt_"+id {
		t.Fatalf("the resolved record kept its first receipt id %s", current)
	}
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	v, err := receipt.NewVerifier(jwks, f.engine.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []string{id, current, "rcpt_" + id} {
		rc := f.do("GET", "/v1/receipts/"+asked, "", nil)
		op := f.do("GET", "/v1/receipts/"+asked+"/openings", keyA, nil)
		if rc.status != http.StatusOK || op.status != http.StatusOK {
			t.Fatalf("%s: receipt %d, openings %d %s", asked, rc.status, op.status, op.body)
		}
		openings, err := receipt.ParseOpenings(op.body)
		if err != nil || len(openings) == 0 {
			t.Fatalf("%s: openings %v (%d)", asked, err, len(openings))
		}
		if _, err := v.Verify(rc.body, openings...); err != nil {
			t.Errorf("GET /v1/receipts/%s and its /openings do not belong together: %v", asked, err)
		}
	}
}

package x402

import (
	"strings"
	"testing"
)

// TestParseContradictorySettleResponse: a settle response carries
// errorReason (and, from the Go SDK, errorMessage) only when settlement
// failed (x402 specification v2 §5.3.2: "omitted if successful"). One that
// says success:true and names an error contradicts itself: which one holds
// is not for the engine to guess, so it is refused where it contradicts
// itself, and nothing is parsed to record. success:false is NOT_SETTLED
// whether or not it names a transaction (the facilitator reports that the
// transaction did not settle the payment), except "settlement_pending"
// with a transaction; the answer names the transaction it will not record.
func TestParseContradictorySettleResponse(t *testing.T) {
	for _, c := range []struct{ member, value string }{
		{"errorReason", "insufficient_funds"},
		{"errorReason", SettlementPending},
		{"errorMessage", "transaction reverted"},
	} {
		settle, req, payload := consistentDocs()
		settle[c.member] = c.value
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, "/settleResponse/"+c.member)
		if !strings.Contains(err.Error(), "success") {
			t.Errorf("%s with success:true: %v does not say what it contradicts", c.member, err)
		}
	}
	// An empty errorReason is no error.
	settle, req, payload := consistentDocs()
	settle["errorReason"] = ""
	if _, err := parseMaps(t, settle, req, payload); err != nil {
		t.Errorf("success:true with errorReason \"\": %v", err)
	}

	for _, reason := range []string{"transaction_failed", "failed_to_get_receipt", ""} {
		settle, req, payload := consistentDocs()
		settle["success"] = false
		settle["errorReason"] = reason
		_, err := parseMaps(t, settle, req, payload)
		e, ok := err.(*Error)
		if !ok || e.Kind != NotSettled || e.Reason != reason {
			t.Fatalf("success:false %q with a transaction: %v, want %s", reason, err, NotSettled)
		}
		if tx := settle["transaction"].(string); !strings.Contains(e.Detail, tx) {
			t.Errorf("success:false %q: %q does not name the transaction %s it does not record", reason, e.Detail, tx)
		}
	}
}

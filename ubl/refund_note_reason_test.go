package ubl

import (
	"strings"
	"testing"
)

// TestRefundNoteReasonEndsOneSentence: the reason ends the credit note's
// note (BT-22) as one sentence, whether or not the merchant wrote its full
// stop: "not delivered." read "Reason: not delivered.." on the customer's
// document.
func TestRefundNoteReasonEndsOneSentence(t *testing.T) {
	base := Refund{RefundedOn: "2026-02-03", Amount: "5.000000", Asset: "USDC", Invoice: "F402-2026-000001",
		Rate: "1.1624", RateCurrency: "USD", RateDate: "2026-01-14"}
	for reason, want := range map[string]string{
		"not delivered":     " Reason: not delivered.",
		"not delivered.":    " Reason: not delivered.",
		" not delivered. ":  " Reason: not delivered.",
		"why was I billed?": " Reason: why was I billed?",
		"duplicate!":        " Reason: duplicate!",
	} {
		r := base
		r.Reason = reason
		got, err := RefundNote("EUR", r)
		if err != nil {
			t.Fatalf("%q: %v", reason, err)
		}
		if !strings.HasSuffix(got, want) {
			t.Errorf("reason %q: note ends %q, want %q", reason, got[strings.LastIndex(got, " Reason"):], want)
		}
	}
}

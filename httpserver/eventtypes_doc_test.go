package httpserver_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestEveryEventTypeDocumented: every event type a ledger entry can carry
// (and a webhook endpoint therefore receives) is named where a receiver
// looks for the list: the README's Webhooks section, the agent card's
// signed_webhooks skill and the OpenAPI document. The README listed four
// of eight and the agent card seven.
func TestEveryEventTypeDocumented(t *testing.T) {
	types := []string{fiscal.EventSettlementProcessed, fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve,
		refunds.EventSettlementRefunded, fiscalevent.EventRecorded, fiscalevent.EventRevised,
		fiscal.EventAccountThresholdCrossed, invoicing.EventInvoiceSummaryIssued, invoicing.EventInvoiceIssued}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "\n## Webhooks\n")
	if start < 0 {
		t.Fatal("README has no ## Webhooks section")
	}
	intro := s[start:]
	intro = intro[:strings.Index(intro, "**Endpoints**")]
	f := newFixture(t)
	var card struct {
		Skills []struct {
			ID       string   `json:"id"`
			Examples []string `json:"examples"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(f.do("GET", "/.well-known/agent-card.json", "", nil).body, &card); err != nil {
		t.Fatal(err)
	}
	var skill string
	for _, sk := range card.Skills {
		if sk.ID == "signed_webhooks" {
			skill = strings.Join(sk.Examples, " ")
		}
	}
	if skill == "" {
		t.Fatal("the agent card has no signed_webhooks skill with examples")
	}
	doc := string(f.do("GET", "/openapi.json", "", nil).body)
	for _, typ := range types {
		if !strings.Contains(intro, "`"+typ+"`") {
			t.Errorf("%s is not among the README's webhook event types", typ)
		}
		if !strings.Contains(skill, typ) {
			t.Errorf("%s is not in the agent card's signed_webhooks skill", typ)
		}
		if !strings.Contains(doc, typ) {
			t.Errorf("%s is not in the OpenAPI document", typ)
		}
	}
}

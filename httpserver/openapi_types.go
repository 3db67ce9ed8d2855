package httpserver

import (
	"reflect"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/x402"
)

// Types and schema parts that exist only to document answers whose Go
// type is looser than their content: a page whose items are raw JSON, a
// simulation that embeds a record and a receipt as stored, an event whose
// data is the record of its entry, and the x402 documents an ingest
// request carries. A generated client gets typed values for each.

// settlementPageDoc documents GET /settlements: listing.Page with its items
// typed (TestPageDocsMatchPage keeps the members equal).
type settlementPageDoc struct {
	Object     string          `json:"object"`
	Data       []fiscal.Record `json:"data"`
	HasMore    bool            `json:"has_more"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// fiscalEventPageDoc documents GET /v1/fiscal-events.
type fiscalEventPageDoc struct {
	Object     string              `json:"object"`
	Data       []fiscalevent.Event `json:"data"`
	HasMore    bool                `json:"has_more"`
	NextCursor string              `json:"next_cursor,omitempty"`
}

// accountEventDoc documents the data of an account.threshold_crossed
// event: the account event document the engine stores (fiscal/totals.go,
// object account_event; TestEventDataOfEveryEventTypeIsDocumented checks
// a real one against it, member for member).
type accountEventDoc struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Type        string `json:"type"`
	Account     string `json:"account"`
	Year        int    `json:"year"`
	Limit       string `json:"limitEur"`
	TotalBefore string `json:"totalBeforeEur"`
	TotalAfter  string `json:"totalAfterEur"`
	RecordID    string `json:"recordId"` // the supply that crossed
	At          string `json:"at"`
	LegalBasis  string `json:"legalBasis"`
}

func init() {
	componentNames[reflect.TypeFor[settlementPageDoc]()] = "SettlementPage"
	componentNames[reflect.TypeFor[fiscalEventPageDoc]()] = "FiscalEventPage"
	componentNames[reflect.TypeFor[accountEventDoc]()] = "AccountEvent"
}

// memberSchemas replace the schema of members whose Go type is raw JSON,
// keyed by "Component.member". (A function: the schemas refer back to the
// generator that consults it.)
func memberSchemas() map[string]func(g *schemaGen) map[string]any {
	return map[string]func(g *schemaGen) map[string]any{
		"Simulation.record":  func(g *schemaGen) map[string]any { return g.ref(reflect.TypeFor[fiscal.Record]()) },
		"Simulation.receipt": func(g *schemaGen) map[string]any { return g.ref(reflect.TypeFor[receiptDoc]()) },
		// An event's data is the document its entry stored: a settlement
		// record, a fiscal event, a refund, an account event or an invoice's
		// document, told apart by "object".
		"EventPayload.data": func(g *schemaGen) map[string]any {
			return map[string]any{
				"description": "The document as stored in the event's ledger entry: a settlement record (`object` `settlement`), a fiscal event (`object` `fiscal_event`), a refund (`object` `refund`, event `settlement.refunded`), the account event (`object` `account_event`, event `account.threshold_crossed`) or the invoice's document (`object` `summary_invoice`, events `invoice.summary_issued` and `invoice.issued`: not a record).",
				"oneOf": []any{g.ref(reflect.TypeFor[fiscal.Record]()), g.ref(reflect.TypeFor[fiscalevent.Event]()), g.ref(reflect.TypeFor[refunds.Refund]()),
					g.ref(reflect.TypeFor[accountEventDoc]()), g.ref(reflect.TypeFor[invoicing.SummaryInvoice]())},
				"discriminator": map[string]any{"propertyName": "object", "mapping": map[string]any{
					fiscal.ObjectSettlement:        "#/components/schemas/Record",
					fiscal.ObjectFiscalEvent:       "#/components/schemas/FiscalEvent",
					refunds.ObjectRefund:           "#/components/schemas/Refund",
					fiscal.ObjectAccountEvent:      "#/components/schemas/AccountEvent",
					invoicing.ObjectSummaryInvoice: "#/components/schemas/SummaryInvoice",
				}},
			}
		},
		// The refunds of a record as GET /settlements/{id} adds them: each
		// stored refund.
		"RecordRefunds.items": func(g *schemaGen) map[string]any {
			return map[string]any{"type": "array", "items": g.ref(reflect.TypeFor[refunds.Refund]()), "description": "Every refund of the settlement as stored, oldest first."}
		},
		"X402IngestRequest.settleResponse": func(g *schemaGen) map[string]any {
			return x402Document(g, reflect.TypeFor[x402.SettleResponse](), "PAYMENT-RESPONSE (v1: X-PAYMENT-RESPONSE)", false)
		},
		"X402IngestRequest.paymentRequirements": func(g *schemaGen) map[string]any {
			return x402Document(g, reflect.TypeFor[x402.PaymentRequirements](), "none: the requirements travel in the body of the 402 answer", true)
		},
		"X402IngestRequest.paymentPayload": func(g *schemaGen) map[string]any {
			return x402Document(g, reflect.TypeFor[x402.PaymentPayload](), "PAYMENT-SIGNATURE (v1: X-PAYMENT)", true)
		},
	}
}

// x402Document is an x402 document as the ingest request takes it: the
// JSON object, or the base64 header value as a string. An optional one
// (mayBeAbsent) may also be JSON null, the object without members or the
// empty string, which package x402 reads as absent (x402/doc.go, "Parsing
// rules"), as the member left out is.
func x402Document(g *schemaGen, t reflect.Type, header string, mayBeAbsent bool) map[string]any {
	alts := []any{
		g.ref(t),
		map[string]any{"type": "string", "contentEncoding": "base64", "minLength": 1,
			"description": "The document as the base64 header value (header: " + header + ")."},
	}
	if mayBeAbsent {
		const none = "No document: read as if the member were left out."
		alts = append(alts,
			map[string]any{"type": "object", "maxProperties": 0, "additionalProperties": false, "description": none},
			map[string]any{"type": "string", "maxLength": 0, "description": none},
			map[string]any{"type": "null", "description": none})
	}
	return map[string]any{"oneOf": alts}
}

// conditionalSchemas add "if/then" (or "oneOf") to components whose
// required members depend on a status or a version: what a processed
// record or a determined VAT treatment always carries, and which member
// of a receipt is signed.
var conditionalSchemas = map[string]func() map[string]any{
	// A receipt carries its JWS (1.0.0 to 3.0.0) or its payload (4.0.0),
	// never both.
	"receiptDoc": func() map[string]any {
		return map[string]any{"oneOf": []any{requiredMembers("jws"), requiredMembers("payload")}}
	},
	"VatDetermination": func() map[string]any {
		return map[string]any{
			"if":   map[string]any{"required": []string{"status"}, "properties": map[string]any{"status": map[string]any{"const": vat.StatusDetermined}}},
			"then": requiredMembers("jurisdiction", "regime", "taxCategoryCode", "legalBasis", "buyerTreatment"),
		}
	},
	// A processed record carries its invoice, unless its `invoicing` says
	// a monthly summary covers the supply or none is required
	// (summary_monthly, none_b2c: Art. 223, 219a(2)(b), 220(1) Directive
	// 2006/112/EC).
	"Record": func() map[string]any {
		return map[string]any{
			"if": map[string]any{"required": []string{"reviewStatus"}, "properties": map[string]any{"reviewStatus": map[string]any{"const": fiscal.StatusProcessed}}},
			"then": map[string]any{
				"anyOf": []any{
					requiredMembers("invoice"),
					map[string]any{"required": []string{"invoicing"}, "properties": map[string]any{"invoicing": map[string]any{
						"required": []string{"invoice"}, "properties": map[string]any{"invoice": map[string]any{"enum": []string{invoicelaw.BySummary, invoicelaw.ByNone}}}}}},
				},
				"properties": map[string]any{
					"fx":             requiredMembers("usdPerEur", "grossEur", "netEur", "vatEur", "rounding"),
					"classification": map[string]any{"properties": map[string]any{"status": map[string]any{"const": vat.StatusDetermined}}},
				},
			},
		}
	},
}

// requiredMembers is a schema that requires the members (each declared,
// with the component's own schema of it applying alongside).
func requiredMembers(names ...string) map[string]any {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{}
	}
	return map[string]any{"required": names, "properties": props}
}

// memberSchema returns the replacement schema of a member, if any.
func (g *schemaGen) memberSchema(component, member string) (map[string]any, bool) {
	if f, ok := memberSchemas()[component+"."+member]; ok {
		return f(g), true
	}
	return nil, false
}

// isX402Component reports whether a component is one of the x402
// documents, whose network members may be v1 names ("base").
func isX402Component(component string) bool { return strings.HasPrefix(component, "X402") }

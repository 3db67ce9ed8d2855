package httpserver

import (
	"encoding"
	"encoding/json"
	"path"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/webhooks"
)

// The OpenAPI document's schemas are derived from the Go types the
// handlers encode and decode, by reflection over their json tags, so a
// field added to a record appears in the document without anyone
// remembering to add it. A member without omitempty is always present and
// is marked required; request types (strictTypes) reject unknown members,
// as their decoders do; response objects stay open because response fields
// may grow (fields may be added, none renamed).

// schemaGen collects the components/schemas of one document.
type schemaGen struct {
	schemas map[string]any
	names   map[reflect.Type]string
}

func newSchemaGen() *schemaGen {
	return &schemaGen{schemas: map[string]any{}, names: map[reflect.Type]string{}}
}

var (
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
)

// specialSchemas are types whose JSON form is not their Go structure.
func specialSchema(t reflect.Type) (map[string]any, bool) {
	switch t {
	case reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}, true
	case reflect.TypeFor[decimal.Decimal]():
		return map[string]any{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?$`, "description": "A decimal number as a string."}, true
	case reflect.TypeFor[vat.Percent]():
		return map[string]any{"type": "number", "format": "double", "minimum": 0, "maximum": 100, "description": "A VAT rate in percent, written as an exact JSON number literal (19, 25.5)."}, true
	case reflect.TypeFor[json.RawMessage]():
		return map[string]any{}, true
	case reflect.TypeFor[tlog.Hash]():
		return map[string]any{"type": "string", "contentEncoding": "base64", "description": "A SHA-256 hash, base64 (standard alphabet, padded)."}, true
	case reflect.TypeFor[catalog.Support]():
		return map[string]any{"type": "string", "enum": []string{string(catalog.Supported), string(catalog.Experimental), string(catalog.Planned), string(catalog.Unsupported)}}, true
	}
	return nil, false
}

// componentName names a struct type's schema. The names are part of the
// published API, the Go names are not: the types of the engine and the
// packages around it are named as they were when they all lived in package
// fiscal (componentNames renames those whose Go name changed), the leaf
// packages' types are prefixed with the package ("VatDetermination",
// "ReceiptClaims"), so names never collide.
func componentName(t reflect.Type) string {
	if name, ok := componentNames[t]; ok {
		return name
	}
	pkg := path.Base(t.PkgPath())
	switch pkg {
	case "fiscal", "httpserver", "catalog", "webhooks", "ingest", "fiscalevent", "sandbox", "parties", "refunds", "invoicelaw", "invoicing":
		return t.Name()
	}
	r := []rune(pkg)
	r[0] = unicode.ToUpper(r[0])
	return string(r) + t.Name()
}

// ref returns the schema of t: a $ref for named structs (registering the
// component), an inline schema otherwise.
func (g *schemaGen) ref(t reflect.Type) map[string]any {
	if s, ok := specialSchema(t); ok {
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.ref(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := map[string]any{"type": "integer"}
		if t.Kind() == reflect.Int64 {
			s["format"] = "int64"
		}
		return s
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.ref(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.ref(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name, ok := g.names[t]
		if !ok {
			name = componentName(t)
			g.names[t] = name
			g.schemas[name] = nil // reserve: recursive types terminate
			g.schemas[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	if t.Implements(textMarshaler) || t.Implements(jsonMarshaler) {
		return map[string]any{"type": "string"}
	}
	return map[string]any{}
}

// object is the schema of a struct's JSON object.
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	name := componentName(t)
	if d, ok := typeDocs[name]; ok {
		s["description"] = d
	}
	if strictTypes[t] {
		s["additionalProperties"] = false
	}
	if cond, ok := conditionalSchemas[name]; ok {
		for k, v := range cond() {
			s[k] = v
		}
	}
	return s
}

// fields adds t's JSON members (embedded structs promoted) in field order.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		fs, replaced := g.memberSchema(componentName(t), name)
		if !replaced {
			fs = withFormat(g.ref(f.Type), componentName(t), name)
		}
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String {
			if items, ok := fs["items"].(map[string]any); ok {
				fs = map[string]any{"type": "array", "items": withFormat(items, componentName(t), name)}
			}
		}
		key := componentName(t) + "." + name
		if d, ok := fieldDocs[key]; ok || fieldEnums[key] != nil {
			fs = annotate(fs, d, fieldEnums[key])
		}
		if f.Type.Kind() == reflect.Pointer && !omit {
			fs = map[string]any{"oneOf": []any{fs, map[string]any{"type": "null"}}}
		}
		props[name] = fs
		if !omit && !optionalMembers[componentName(t)+"."+name] {
			*required = append(*required, name)
		}
	}
}

// annotate adds a description and an enum to a field schema; a $ref cannot
// carry siblings in every tool, so it is wrapped in allOf.
func annotate(s map[string]any, desc string, enum []string) map[string]any {
	out := map[string]any{}
	if _, isRef := s["$ref"]; isRef {
		out["allOf"] = []any{s}
	} else {
		for k, v := range s {
			out[k] = v
		}
	}
	if desc != "" {
		out["description"] = desc
	}
	if enum != nil {
		out["enum"] = enum
	}
	return out
}

// componentNames are the published names of types whose Go name changed
// when they moved out of package fiscal.
var componentNames = map[reflect.Type]string{
	reflect.TypeFor[webhooks.Endpoint]():           "WebhookEndpoint",
	reflect.TypeFor[webhooks.EndpointWithSecret](): "WebhookEndpointWithSecret",
	reflect.TypeFor[webhooks.EndpointRequest]():    "WebhookEndpointRequest",
	reflect.TypeFor[webhooks.SecretInfo]():         "WebhookSecretInfo",
	reflect.TypeFor[webhooks.Attempt]():            "WebhookAttempt",
	reflect.TypeFor[webhooks.Delivery]():           "WebhookDelivery",
	reflect.TypeFor[fiscalevent.Event]():           "FiscalEvent",
	reflect.TypeFor[fiscalevent.Request]():         "FiscalEventRequest",
	reflect.TypeFor[refunds.Request]():             "RefundRequest",
	reflect.TypeFor[refunds.Transaction]():         "RefundTransaction",
	reflect.TypeFor[fiscalevent.Payment]():         "EventPayment",
	reflect.TypeFor[fiscalevent.Seller]():          "FiscalEventSeller",
	reflect.TypeFor[fiscalevent.Buyer]():           "FiscalEventBuyer",
	reflect.TypeFor[parties.Seller]():              "EventSeller",
	reflect.TypeFor[parties.Buyer]():               "EventBuyer",
	reflect.TypeFor[parties.Supply]():              "EventSupply",
	reflect.TypeFor[ingest.Status]():               "IngestStatus",
	reflect.TypeFor[ingest.Error]():                "IngestError",
	reflect.TypeFor[invoicing.Coverage]():          "InvoicingCoverage",
	reflect.TypeFor[ossReturnDoc]():                "SignedOSSReturn",
	reflect.TypeFor[returns.Return]():              "OSSReturn",
}

// strictTypes are decoded with unknown members rejected (decodeJSON,
// package internal/strictjson): every request body and the objects in it
// (TestRequestSchemasRefuseUnknownMembers). The x402 documents are decoded
// open (package x402) and stay open.
var strictTypes = map[reflect.Type]bool{
	reflect.TypeFor[fiscal.SettlementRequest]():       true,
	reflect.TypeFor[catalog.CapabilityCheckRequest](): true,
	reflect.TypeFor[catalog.CheckPayment]():           true,
	reflect.TypeFor[X402IngestRequest]():              true,
	reflect.TypeFor[fiscal.BuyerFacts]():              true,
	reflect.TypeFor[sandbox.SimulateRequest]():        true,
	reflect.TypeFor[sandbox.EvaluateRequest]():        true,
	reflect.TypeFor[fiscal.Seller]():                  true,
	reflect.TypeFor[fiscal.Resolution]():              true,
	reflect.TypeFor[fiscal.ResolutionBuyer]():         true,
	reflect.TypeFor[fiscal.ManualDetermination]():     true,
	reflect.TypeFor[fiscalevent.Request]():            true,
	reflect.TypeFor[fiscalevent.Payment]():            true,
	reflect.TypeFor[parties.Seller]():                 true,
	reflect.TypeFor[parties.Buyer]():                  true,
	reflect.TypeFor[refunds.Request]():                true,
	reflect.TypeFor[invoicing.SummaryRequest]():       true,
	reflect.TypeFor[webhooks.EndpointRequest]():       true,
	// Also in answers (an evaluation's supply, a refund's transfer), as
	// CheckPayment is: the request's refusal is what a client must know.
	reflect.TypeFor[parties.Supply]():      true,
	reflect.TypeFor[refunds.Transaction](): true,
}

// optionalMembers are members without omitempty that are not always
// there: in some versions of a document and not in others (a
// service.receipt/3.0.0 receipt commits its personal fields instead of
// carrying them, and signs no log index), and request members the server
// does without (TestRequestSchemasRequireWhatTheServerRequires).
var optionalMembers = map[string]bool{
	"SummaryRequest.buyer":           true, // absent: every buyer's summary of the month
	"FiscalEventRequest.buyer":       true, // absent: recorded for manual review
	"X402IngestRequest.buyer":        true, // absent: recorded pending review (buyer_country_missing)
	"X402PaymentPayload.payload":     true, // absent, null or {}: no authorization is claimed (x402/doc.go)
	"RefundPayment.txHash":           true, // absent without a refund transaction (refunds.RefundPayment.MarshalJSON)
	"ReceiptSettlement.tx_hash":      true,
	"ReceiptSettlement.payer":        true,
	"ReceiptSettlement.receiver":     true,
	"ReceiptInvoice.ubl_sha256":      true,
	"ReceiptLogRef.index":            true,
	"ReceiptChainFacts.block_number": true,
	"ReceiptChainFacts.block_hash":   true,
}

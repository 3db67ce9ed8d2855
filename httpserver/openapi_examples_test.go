package httpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vies"
	"github.com/fiscal402/fiscal402/webhooks"
)

// exampleStep is one request of the examples' scenario.
type exampleStep struct {
	op, method, path, key string
	body                  any // JSON request body (nil: none)
	headers               []string
	status                int
	keep                  bool // record the request body as the operation's request example
}

// exampleHook is the webhook URL the examples show. The fixture registers a
// loopback URL (tests resolve no public names); the examples show a public
// https URL in its place, the only kind a production deployment accepts.
const (
	exampleHook   = "https://merchant.example/webhooks/fiscal402"
	fixtureHook   = "http://127.0.0.1:9/webhooks/fiscal402"
	exampleFile   = "openapi_examples.json"
	exampleTxHash = "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f"
)

// TestOpenAPIExamples runs the walkthrough and its error cases on a
// deterministic server, keeps each request body and answer as the
// operation's examples (openapi_examples.json, a golden file: -update
// rewrites it), and checks the served document: every operation has an
// example of each JSON or text answer, and of its request body, and every
// example matches its schema.
func TestOpenAPIExamples(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &fixture{t: t, dir: t.TempDir()}
	// A log key from the deterministic stream (fiscal.New would draw one
	// from crypto/rand), so that checkpoints and proofs are the same on
	// every run.
	// The sandbox's own log (in <dir>/sandbox) gets one the same way.
	for _, k := range []struct{ dir, origin string }{{f.dir, fiscal.DefaultLogOrigin}, {filepath.Join(f.dir, "sandbox"), fiscal.DefaultLogOrigin + "/sandbox"}} {
		skey, _, err := ledger.GenerateLogKey(k.origin, &detRand{seed: "examples-log-" + k.origin})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(k.dir, "keys"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(k.dir, "keys", "log.key"), []byte(skey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e, err := fiscal.New(fiscal.Config{Dir: f.dir, Accounts: testAccounts(t), Clock: func() time.Time { return testNow }, Rand: &detRand{seed: "examples"}, Logger: quiet, VIES: vies.NewFake()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, e, httpserver.Options{Logger: quiet, PublicURL: publicURL, RateLimit: rate.Inf}, webhooks.Options{AllowLoopback: true, NoDispatcher: true})
	f.engine, f.srv = e, httptest.NewServer(h)
	t.Cleanup(f.close)

	walk := settlement(map[string]any{"txHash": exampleTxHash})
	vars := map[string]string{}
	var got = map[string]map[string]any{} // op → "request" / status → body
	run := func(s exampleStep) response {
		t.Helper()
		path := s.path
		for k, v := range vars {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		var raw []byte
		if s.body != nil {
			raw = mustJSON(t, s.body)
		}
		headers := append([]string{"X-Request-Id", fmt.Sprintf("req_example_%s_%d", s.op, s.status)}, s.headers...)
		r := f.do(s.method, path, s.key, raw, headers...)
		if r.status != s.status {
			t.Fatalf("%s %s %s: %d, want %d: %s", s.op, s.method, path, r.status, s.status, r.body)
		}
		if got[s.op] == nil {
			got[s.op] = map[string]any{}
		}
		if s.keep {
			got[s.op]["request"] = s.body
		}
		ct := strings.TrimSpace(strings.Split(r.header.Get("Content-Type"), ";")[0])
		key := fmt.Sprint(s.status)
		switch {
		case strings.HasSuffix(ct, "json"):
			var v any
			if err := json.Unmarshal([]byte(strings.ReplaceAll(string(r.body), fixtureHook, exampleHook)), &v); err != nil {
				t.Fatalf("%s: %v", s.op, err)
			}
			if _, dup := got[s.op][key]; !dup {
				got[s.op][key] = v
			}
		case ct == "text/plain":
			got[s.op][key] = string(r.body)
		}
		return r
	}
	id := func(r response) string { return r.json(t)["id"].(string) }

	// The walkthrough (README "Walkthrough") and its error cases.
	created := run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: walk, headers: []string{"Idempotency-Key", "order-1001"}, status: 201, keep: true})
	vars["record"] = id(created)
	run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: walk, status: 200})
	run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"txHash": exampleTxHash, "amountUsdc": "12.00"}), headers: []string{"Idempotency-Key", "order-1001"}, status: 409})
	run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"amountUsdc": "11.9000001"}), status: 400})
	run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"txHash": txHash(90), "network": "eip155:10"}), status: 422})
	pending := run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"txHash": txHash(91), "consumerCountry": nil}), status: 201})
	vars["pending"] = id(pending)
	run(exampleStep{op: "getSettlement", method: "GET", path: "/settlements/{record}", key: keyA, status: 200})
	run(exampleStep{op: "getSettlement", method: "GET", path: "/settlements/{record}", key: keyB, status: 404})
	run(exampleStep{op: "getSettlementInvoice", method: "GET", path: "/settlements/{pending}/ubl", key: keyA, status: 404})
	run(exampleStep{op: "listSettlements", method: "GET", path: "/settlements?limit=1", key: keyA, status: 200})
	run(exampleStep{op: "listSettlements", method: "GET", path: "/settlements?reviewstatus=PROCESSED", key: keyA, status: 400})
	run(exampleStep{op: "resolveSettlement", method: "POST", path: "/settlements/{pending}/resolve", key: keyA, body: map[string]any{
		"buyer": map[string]any{"consumerCountry": "AT"}, "resolvedBy": "ops@merchant.example", "note": "country from the customer's billing address"},
		headers: []string{"Idempotency-Key", "resolve-1"}, status: 201, keep: true})
	run(exampleStep{op: "resolveSettlement", method: "POST", path: "/settlements/{record}/resolve", key: keyA, body: map[string]any{"buyer": map[string]any{"consumerCountry": "AT"}, "resolvedBy": "ops@merchant.example"}, status: 409})
	refundBody := map[string]any{"amountUsdc": "5.00", "reason": "one of two items returned", "transaction": map[string]any{"network": "eip155:8453", "txHash": txHash(95)}}
	refund := run(exampleStep{op: "refundSettlement", method: "POST", path: "/settlements/{record}/refunds", key: keyA, body: refundBody, headers: []string{"Idempotency-Key", "refund-1"}, status: 201, keep: true})
	vars["refund"] = id(refund)
	run(exampleStep{op: "refundSettlement", method: "POST", path: "/settlements/{record}/refunds", key: keyA, body: refundBody, status: 200})
	run(exampleStep{op: "refundSettlement", method: "POST", path: "/settlements/{record}/refunds", key: keyA, body: map[string]any{"amountUsdc": "100.00"}, status: 409})
	run(exampleStep{op: "refundSettlement", method: "POST", path: "/settlements/{record}/refunds", key: keyA, body: map[string]any{"amountUsdc": "5.0000001"}, status: 400})
	run(exampleStep{op: "getRefund", method: "GET", path: "/settlements/{record}/refunds/{refund}", key: keyA, status: 200})
	run(exampleStep{op: "getRefund", method: "GET", path: "/settlements/{record}/refunds/{refund}", key: keyB, status: 404})
	run(exampleStep{op: "getRefundCreditNote", method: "GET", path: "/settlements/{record}/refunds/{refund}/ubl", key: keyA, status: 200})
	run(exampleStep{op: "getReceipt", method: "GET", path: "/v1/receipts/rcpt_{record}", status: 200})
	run(exampleStep{op: "getReceiptOpenings", method: "GET", path: "/v1/receipts/rcpt_{record}/openings", key: keyA, status: 200, keep: true})
	run(exampleStep{op: "getReceiptOpenings", method: "GET", path: "/v1/receipts/rcpt_{record}/openings", key: keyB, status: 404})
	run(exampleStep{op: "getReceipt", method: "GET", path: "/v1/receipts/rcpt_x402-00000000000000000000000000000000", status: 404})
	run(exampleStep{op: "getJWKS", method: "GET", path: "/.well-known/jwks.json", status: 200})
	run(exampleStep{op: "getLogKey", method: "GET", path: "/.well-known/log-key", status: 200})
	run(exampleStep{op: "getCheckpoint", method: "GET", path: "/v1/log/checkpoint", status: 200})
	run(exampleStep{op: "getInclusionProof", method: "GET", path: "/v1/log/proof/inclusion?index=0&size=2", status: 200})
	run(exampleStep{op: "getInclusionProof", method: "GET", path: "/v1/log/proof/inclusion", status: 400})
	run(exampleStep{op: "getConsistencyProof", method: "GET", path: "/v1/log/proof/consistency?from=1&to=2", status: 200})
	run(exampleStep{op: "getConsistencyProof", method: "GET", path: "/v1/log/proof/consistency?from=x", status: 400})
	run(exampleStep{op: "getFXStatus", method: "GET", path: "/v1/fx/status", status: 200})
	run(exampleStep{op: "getOSSReturn", method: "GET", path: "/v1/returns/oss?period=2026-Q2", key: keyA, status: 200})
	run(exampleStep{op: "getOSSReturn", method: "GET", path: "/v1/returns/oss?period=2026-Q5", key: keyA, status: 400})
	run(exampleStep{op: "getOSSRecords", method: "GET", path: "/v1/returns/oss/records?period=2026-Q2&memberState=DE", key: keyA, status: 200})
	run(exampleStep{op: "getOSSRecords", method: "GET", path: "/v1/returns/oss/records?period=2026-Q4", key: keyA, status: 400})
	run(exampleStep{op: "exportSettlements", method: "GET", path: "/settlements/export?format=xml", key: keyA, status: 400})
	run(exampleStep{op: "getAccountTotals", method: "GET", path: "/v1/account/totals", key: keyA, status: 200, keep: true})

	// x402 ingest: this fixture has no chain, so the documents are refused
	// for want of verification (what a deployment with chain mode off
	// answers).
	x402Req := x402Body(exampleTxHash, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", 11_900_000, map[string]any{"consumerCountry": "DE"})
	run(exampleStep{op: "ingestX402Settlement", method: "POST", path: "/v1/x402/settlements", key: keyA, body: x402Req, headers: []string{"Idempotency-Key", "x402-order-1001"}, status: 422, keep: true})
	run(exampleStep{op: "getX402Ingest", method: "GET", path: "/v1/x402/settlements/x402-00000000000000000000000000000000", key: keyA, status: 404})

	// Fiscal events.
	event := run(exampleStep{op: "createFiscalEvent", method: "POST", path: "/v1/fiscal-events", key: keyA, body: fiscalEventBody(nil), headers: []string{"Idempotency-Key", "event-1001"}, status: 201, keep: true})
	vars["event"] = id(event)
	run(exampleStep{op: "createFiscalEvent", method: "POST", path: "/v1/fiscal-events", key: keyA, body: fiscalEventBody(nil), status: 200})
	run(exampleStep{op: "createFiscalEvent", method: "POST", path: "/v1/fiscal-events", key: keyA, body: fiscalEventBody(map[string]any{"payment.txHash": exampleTxHash}), status: 409})
	run(exampleStep{op: "listFiscalEvents", method: "GET", path: "/v1/fiscal-events?limit=1", key: keyA, status: 200})
	run(exampleStep{op: "getFiscalEvent", method: "GET", path: "/v1/fiscal-events/{event}", key: keyA, status: 200})
	run(exampleStep{op: "getFiscalEvent", method: "GET", path: "/v1/fiscal-events/{event}", key: keyB, status: 404})
	run(exampleStep{op: "getFiscalEventInvoice", method: "GET", path: "/v1/fiscal-events/{event}/ubl", key: keyB, status: 404})
	pendingEvent := run(exampleStep{op: "createFiscalEvent", method: "POST", path: "/v1/fiscal-events", key: keyA, body: fiscalEventBody(map[string]any{"payment.txHash": txHash(193), "buyer.country": nil}), status: 201})
	vars["pendingEvent"] = id(pendingEvent)
	run(exampleStep{op: "resolveFiscalEvent", method: "POST", path: "/v1/fiscal-events/{pendingEvent}/resolve", key: keyA, body: map[string]any{
		"buyer": map[string]any{"consumerCountry": "DE"}, "resolvedBy": "ops@merchant.example"},
		headers: []string{"Idempotency-Key", "event-resolve-1"}, status: 201, keep: true})
	run(exampleStep{op: "resolveFiscalEvent", method: "POST", path: "/v1/fiscal-events/{event}/resolve", key: keyA, body: map[string]any{"buyer": map[string]any{"consumerCountry": "AT"}, "resolvedBy": "ops@merchant.example"}, status: 409})

	// Capabilities and the documents.
	check := map[string]any{"seller_country": "IE", "buyer_country": "DE", "supply_type": "digital_service", "buyer_type": "B2C", "supply_date": "2026-04-10",
		"payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}}
	run(exampleStep{op: "checkCapabilities", method: "POST", path: "/v1/capabilities/check", body: check, status: 200, keep: true})
	run(exampleStep{op: "checkCapabilities", method: "POST", path: "/v1/capabilities/check", body: map[string]any{"seller_country": "IE"}, status: 400})
	for op, path := range map[string]string{"getCapabilities": "/v1/capabilities", "getPricing": "/v1/pricing", "getManifest": "/.well-known/service.json",
		"getAgentCard": "/.well-known/agent-card.json", "getReliability": "/v1/reliability", "getDiscovery": "/v1/discovery",
		"getPreference": "/v1/preference", "getSellerValue": "/v1/seller-value", "discover": "/discover"} {
		run(exampleStep{op: op, method: "GET", path: path, status: 200})
	}

	// Sandbox.
	run(exampleStep{op: "evaluateCompliance", method: "POST", path: "/v1/compliance/evaluate", body: evaluateBody(nil), status: 200, keep: true})
	run(exampleStep{op: "evaluateCompliance", method: "POST", path: "/v1/compliance/evaluate", body: evaluateBody(map[string]any{"buyer.country": "US"}), status: 422})
	sim := run(exampleStep{op: "simulateSettlement", method: "POST", path: "/sandbox/v1/simulate", body: settlement(map[string]any{"txHash": txHash(92)}), status: 201, keep: true})
	vars["sandbox"] = sim.json(t)["record"].(map[string]any)["id"].(string)
	run(exampleStep{op: "getSandboxSettlement", method: "GET", path: "/sandbox/v1/settlements/{sandbox}", status: 200})
	run(exampleStep{op: "getSandboxSettlement", method: "GET", path: "/sandbox/v1/settlements/x402-sandbox-nope", status: 404})
	run(exampleStep{op: "getSandboxInvoice", method: "GET", path: "/sandbox/v1/settlements/x402-sandbox-nope/ubl", status: 404})
	run(exampleStep{op: "getSandboxReceipt", method: "GET", path: "/sandbox/v1/receipts/rcpt_{sandbox}", status: 200})
	run(exampleStep{op: "getSandboxJWKS", method: "GET", path: "/sandbox/v1/jwks.json", status: 200})
	run(exampleStep{op: "getSandboxLogKey", method: "GET", path: "/sandbox/v1/log-key", status: 200})

	// Webhooks.
	ep := run(exampleStep{op: "createWebhookEndpoint", method: "POST", path: "/v1/webhook-endpoints", key: keyA, body: map[string]any{"url": fixtureHook, "description": "order system"}, status: 201})
	got["createWebhookEndpoint"]["request"] = map[string]any{"url": exampleHook, "description": "order system"}
	vars["endpoint"] = id(ep)
	run(exampleStep{op: "createWebhookEndpoint", method: "POST", path: "/v1/webhook-endpoints", key: keyA, body: map[string]any{"url": fixtureHook}, status: 409})
	run(exampleStep{op: "listWebhookEndpoints", method: "GET", path: "/v1/webhook-endpoints", key: keyA, status: 200})
	run(exampleStep{op: "getWebhookEndpoint", method: "GET", path: "/v1/webhook-endpoints/{endpoint}", key: keyA, status: 200})
	run(exampleStep{op: "getWebhookEndpoint", method: "GET", path: "/v1/webhook-endpoints/we_nope", key: keyA, status: 404})
	sec := run(exampleStep{op: "addWebhookSecret", method: "POST", path: "/v1/webhook-endpoints/{endpoint}/secrets", key: keyA, status: 201})
	vars["secret"] = sec.json(t)["secretId"].(string)
	run(exampleStep{op: "deleteWebhookSecret", method: "DELETE", path: "/v1/webhook-endpoints/{endpoint}/secrets/{secret}", key: keyA, status: 200})
	run(exampleStep{op: "enableWebhookEndpoint", method: "POST", path: "/v1/webhook-endpoints/{endpoint}/enable", key: keyA, status: 200})
	later := run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"txHash": txHash(93)}), status: 201})
	vars["evt"] = "evt_" + id(later)
	run(exampleStep{op: "listEvents", method: "GET", path: "/v1/events?limit=2", key: keyA, status: 200})
	run(exampleStep{op: "getEvent", method: "GET", path: "/v1/events/{evt}", key: keyA, status: 200})
	run(exampleStep{op: "getEvent", method: "GET", path: "/v1/events/evt_nope", key: keyA, status: 404})
	run(exampleStep{op: "redeliverEvent", method: "POST", path: "/v1/events/{evt}/redeliver", key: keyA, status: 202})
	run(exampleStep{op: "deleteWebhookEndpoint", method: "DELETE", path: "/v1/webhook-endpoints/{endpoint}", key: keyA, status: 204})
	run(exampleStep{op: "deleteWebhookEndpoint", method: "DELETE", path: "/v1/webhook-endpoints/{endpoint}", key: keyA, status: 404})

	// Summary invoices: the account switches to summary_monthly, records a
	// micro-payment of April (closed on the fixture's clock) and issues the
	// month's summary.
	summaryAccounts := testAccounts(t)
	for i := range summaryAccounts {
		summaryAccounts[i].Seller.Invoicing = fiscal.InvoicingSummaryMonthly
	}
	if err := e.SetAccounts(summaryAccounts); err != nil {
		t.Fatal(err)
	}
	micro := run(exampleStep{op: "createSettlement", method: "POST", path: "/settlements", key: keyA, body: settlement(map[string]any{"txHash": txHash(94), "amountUsdc": "0.04"}), status: 201})
	vars["micro"] = id(micro)
	summaryReq := map[string]any{"period": "2026-04", "buyer": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"}
	sum := run(exampleStep{op: "issueSummaryInvoices", method: "POST", path: "/v1/invoices/summaries", key: keyA, body: summaryReq, status: 201, keep: true})
	vars["summary"] = sum.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	run(exampleStep{op: "issueSummaryInvoices", method: "POST", path: "/v1/invoices/summaries", key: keyA, body: summaryReq, status: 200})
	run(exampleStep{op: "issueSummaryInvoices", method: "POST", path: "/v1/invoices/summaries", key: keyA, body: map[string]any{"period": "2026-11"}, status: 409})
	run(exampleStep{op: "issueSummaryInvoices", method: "POST", path: "/v1/invoices/summaries", key: keyA, body: map[string]any{"period": "April"}, status: 400})
	run(exampleStep{op: "getSummaryInvoice", method: "GET", path: "/v1/invoices/summaries/{summary}", key: keyA, status: 200})
	run(exampleStep{op: "getSummaryInvoice", method: "GET", path: "/v1/invoices/summaries/{summary}", key: keyB, status: 404})
	run(exampleStep{op: "getSummaryInvoiceUBL", method: "GET", path: "/v1/invoices/summaries/{summary}/ubl", key: keyA, status: 200})
	if by, _ := run(exampleStep{op: "getSettlement", method: "GET", path: "/settlements/{micro}", key: keyA, status: 200}).json(t)["invoicedBy"].(map[string]any); by["summaryId"] != vars["summary"] {
		t.Errorf("the covered record's invoicedBy: %v", by)
	}
	run(exampleStep{op: "getSettlementInvoicedBy", method: "GET", path: "/settlements/{micro}/invoiced-by", key: keyA, status: 200})
	run(exampleStep{op: "getSettlementInvoicedBy", method: "GET", path: "/settlements/{micro}/invoiced-by", key: keyB, status: 404})

	// What this chainless fixture cannot answer, built from the same types:
	// an x402 payment recorded (the record has the settlement's shape) and
	// one held in the queue.
	got["ingestX402Settlement"]["201"] = got["createSettlement"]["201"]
	got["ingestX402Settlement"]["200"] = got["createSettlement"]["200"]
	queued := ingest.Status{ID: vars["record"], Object: "x402_ingest", Account: "acct_a", State: ingest.StateQueued, Reason: "settlement_pending",
		Network: "eip155:8453", TxHash: exampleTxHash, CreatedAt: testNow.Format(time.RFC3339), UpdatedAt: testNow.Add(2 * time.Second).Format(time.RFC3339),
		Attempts: 1, NextAttemptAt: testNow.Add(6 * time.Second).Format(time.RFC3339),
		LastError: &ingest.Error{Code: fiscal.CodeChainUnavailable, Detail: "the transaction is not mined yet"}}
	var qv any
	_ = json.Unmarshal(mustJSON(t, queued), &qv)
	got["ingestX402Settlement"]["202"] = qv
	recorded := queued
	recorded.State, recorded.NextAttemptAt, recorded.LastError, recorded.Attempts, recorded.RecordURL = ingest.StateRecorded, "", nil, 2, "/settlements/"+vars["record"]
	var rv any
	_ = json.Unmarshal(mustJSON(t, recorded), &rv)
	got["getX402Ingest"]["200"] = rv

	out := map[string]any{}
	for op, m := range got {
		ex := map[string]any{}
		responses := map[string]any{}
		for k, v := range m {
			if k == "request" {
				ex["request"] = v
			} else {
				responses[k] = v
			}
		}
		ex["responses"] = responses
		out[op] = ex
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testtool.Golden(t, exampleFile, append(raw, '\n'), *update)
	if *update {
		return // the document below is built from the file compiled in: run again
	}

	// Every operation has its examples, and each matches its schema.
	doc := f.openAPIDocument(t)
	var missing []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			op := o.(map[string]any)
			where := strings.ToUpper(method) + " " + path
			if rb, ok := op["requestBody"].(map[string]any); ok {
				media := rb["content"].(map[string]any)["application/json"].(map[string]any)
				if media["example"] == nil {
					missing = append(missing, where+" request")
				} else {
					for _, e := range doc.check(media["schema"].(map[string]any), media["example"], "") {
						t.Errorf("%s request example: %s", where, e)
					}
				}
			}
			for status, r := range op["responses"].(map[string]any) {
				resp := r.(map[string]any)
				if ref, ok := resp["$ref"].(string); ok {
					name := strings.TrimPrefix(ref, "#/components/responses/")
					resp = doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
				}
				content, _ := resp["content"].(map[string]any)
				for mt, m := range content {
					media := m.(map[string]any)
					if mt == "application/xml" || mt == "text/html" {
						continue
					}
					if media["example"] == nil {
						missing = append(missing, fmt.Sprintf("%s %s %s", where, status, mt))
						continue
					}
					if strings.HasSuffix(mt, "json") {
						for _, e := range doc.check(media["schema"].(map[string]any), media["example"], "") {
							t.Errorf("%s %s example: %s", where, status, e)
						}
					}
				}
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
}

// openAPIDocument fetches and decodes /openapi.json.
func (f *fixture) openAPIDocument(t *testing.T) openAPIDoc {
	t.Helper()
	r := f.do("GET", "/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("GET /openapi.json: %d %s", r.status, r.body)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

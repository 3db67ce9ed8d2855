package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/receipt"
)

// TestSettlementBadInput posts every kind of bad input of the foundation
// issue and checks that each gets the right status, code and field, as a
// problem document carrying the request id, and that nothing is written.
func TestSettlementBadInput(t *testing.T) {
	f := newFixture(t)
	valid := func(o map[string]any) []byte { return mustJSON(t, settlement(o)) }
	cases := []struct {
		name    string
		body    []byte
		headers []string
		key     string
		status  int
		code    string
		field   string
	}{
		{name: "missing amountUsdc", body: valid(map[string]any{"amountUsdc": nil}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "missing txHash", body: valid(map[string]any{"txHash": nil}), status: 400, code: "BAD_REQUEST", field: "/txHash"},
		{name: "missing timestamp", body: valid(map[string]any{"timestamp": nil}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "missing payerWallet", body: valid(map[string]any{"payerWallet": nil}), status: 400, code: "BAD_REQUEST", field: "/payerWallet"},
		{name: "missing receiverWallet", body: valid(map[string]any{"receiverWallet": nil}), status: 400, code: "BAD_REQUEST", field: "/receiverWallet"},
		{name: "missing network", body: valid(map[string]any{"network": nil}), status: 400, code: "BAD_REQUEST", field: "/network"},
		{name: "amount as JSON number", body: valid(map[string]any{"amountUsdc": 11.9}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount negative", body: valid(map[string]any{"amountUsdc": "-1.00"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount zero", body: valid(map[string]any{"amountUsdc": "0"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount zero with decimals", body: valid(map[string]any{"amountUsdc": "0.000000"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount 7 decimals", body: valid(map[string]any{"amountUsdc": "1.0000001"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount exponent", body: valid(map[string]any{"amountUsdc": "1e3"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount leading zero", body: valid(map[string]any{"amountUsdc": "01.5"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount with space", body: valid(map[string]any{"amountUsdc": " 1.5"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount too large", body: valid(map[string]any{"amountUsdc": "1000000000000"}), status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "timestamp not ISO", body: valid(map[string]any{"timestamp": "10/04/2026 14:30"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp without zone", body: valid(map[string]any{"timestamp": "2026-04-10T14:30:00"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp not UTC", body: valid(map[string]any{"timestamp": "2026-04-10T14:30:00+02:00"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp far in the future", body: valid(map[string]any{"timestamp": "2030-01-01T00:00:00Z"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp with a decimal comma", body: valid(map[string]any{"timestamp": "2026-04-10T14:30:00,5Z"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp finer than nanoseconds", body: valid(map[string]any{"timestamp": "2026-04-10T14:30:00.1234567891Z"}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "timestamp as number", body: valid(map[string]any{"timestamp": 1775831400}), status: 400, code: "BAD_REQUEST", field: "/timestamp"},
		{name: "network polygon", body: valid(map[string]any{"network": "eip155:137"}), status: 422, code: "UNSUPPORTED_NETWORK", field: "/network"},
		{name: "network v1 name", body: valid(map[string]any{"network": "base"}), status: 422, code: "UNSUPPORTED_NETWORK", field: "/network"},
		{name: "asset USDT", body: valid(map[string]any{"asset": "USDT"}), status: 422, code: "UNSUPPORTED_ASSET", field: "/asset"},
		{name: "asset Ethereum USDC contract on Base", body: valid(map[string]any{"asset": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}), status: 422, code: "UNSUPPORTED_ASSET", field: "/asset"},
		{name: "scheme upto", body: valid(map[string]any{"scheme": "upto"}), status: 422, code: "UNSUPPORTED_SCHEME", field: "/scheme"},
		{name: "txHash short", body: valid(map[string]any{"txHash": "0x1234"}), status: 400, code: "BAD_REQUEST", field: "/txHash"},
		{name: "txHash without 0x", body: valid(map[string]any{"txHash": strings.Repeat("ab", 32)}), status: 400, code: "BAD_REQUEST", field: "/txHash"},
		{name: "txHash not hex", body: valid(map[string]any{"txHash": "0x" + strings.Repeat("zz", 32)}), status: 400, code: "BAD_REQUEST", field: "/txHash"},
		{name: "payer wallet malformed", body: valid(map[string]any{"payerWallet": "0x1234"}), status: 400, code: "BAD_REQUEST", field: "/payerWallet"},
		{name: "receiver wallet malformed", body: valid(map[string]any{"receiverWallet": "alice.eth"}), status: 400, code: "BAD_REQUEST", field: "/receiverWallet"},
		{name: "misspelled consumerCountry", body: valid(map[string]any{"consumerCountry": nil, "consumerCountyr": "DE"}), status: 400, code: "BAD_REQUEST", field: "/consumerCountyr"},
		{name: "country not ISO", body: valid(map[string]any{"consumerCountry": "Germany"}), status: 400, code: "BAD_REQUEST", field: "/consumerCountry"},
		{name: "country unassigned", body: valid(map[string]any{"consumerCountry": "XX"}), status: 400, code: "BAD_REQUEST", field: "/consumerCountry"},
		{name: "name with control character", body: valid(map[string]any{"consumerName": "Eve\u0007"}), status: 400, code: "BAD_REQUEST", field: "/consumerName"},
		{name: "duplicate member", body: []byte(`{"consumerCountry":"DE","consumerCountry":"FR"}`), status: 400, code: "BAD_REQUEST", field: "/consumerCountry"},
		{name: "not JSON", body: []byte("amountUsdc=11.90"), status: 400, code: "BAD_REQUEST"},
		{name: "JSON array", body: []byte(`[{"amountUsdc":"1"}]`), status: 400, code: "BAD_REQUEST"},
		{name: "empty body", body: []byte{}, status: 400, code: "BAD_REQUEST"},
		{name: "trailing data", body: append(valid(nil), []byte(`{}`)...), status: 400, code: "BAD_REQUEST"},
		{name: "truncated JSON", body: valid(nil)[:40], status: 400, code: "BAD_REQUEST"},
		{name: "text/plain", body: valid(nil), headers: []string{"Content-Type", "text/plain"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", field: "Content-Type"},
		{name: "declared charset latin1", body: valid(nil), headers: []string{"Content-Type", "application/json; charset=latin1"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", field: "Content-Type"},
		{name: "declared charset utf-16", body: valid(nil), headers: []string{"Content-Type", "application/json; charset=UTF-16"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", field: "Content-Type"},
		{name: "no content type", body: valid(nil), headers: []string{"Content-Type", ""}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", field: "Content-Type"},
		{name: "body over the limit", body: valid(map[string]any{"consumerName": strings.Repeat("x", 70<<10)}), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "idempotency key with space", body: valid(nil), headers: []string{"Idempotency-Key", "a b"}, status: 400, code: "BAD_REQUEST", field: "Idempotency-Key"},
		{name: "no key", body: valid(nil), key: "-", status: 401, code: "AUTHENTICATION_FAILED"},
		{name: "wrong key", body: valid(nil), key: "sk_test_wrong", status: 401, code: "AUTHENTICATION_FAILED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := keyA
			switch tc.key {
			case "-":
				key = ""
			case "":
			default:
				key = tc.key
			}
			before := f.engine.Ledger().Size()
			resp := f.do("POST", "/settlements", key, tc.body, tc.headers...)
			assertProblem(t, resp, tc.status, tc.code, tc.field)
			if after := f.engine.Ledger().Size(); after != before {
				t.Errorf("ledger grew from %d to %d on a rejected request", before, after)
			}
		})
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Fatalf("ledger has %d entries after only bad requests", n)
	}
}

func assertProblem(t *testing.T, resp response, status int, code, field string) {
	t.Helper()
	if resp.status != status {
		t.Fatalf("status %d, want %d; body %s", resp.status, status, resp.body)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	p := resp.json(t)
	if p["code"] != code {
		t.Errorf("code %v, want %s; body %s", p["code"], code, resp.body)
	}
	if field != "" && p["field"] != field {
		t.Errorf("field %v, want %s; body %s", p["field"], field, resp.body)
	}
	if int(p["status"].(float64)) != status {
		t.Errorf("problem status %v, want %d", p["status"], status)
	}
	id := resp.header.Get("X-Request-Id")
	if id == "" || p["request_id"] != id {
		t.Errorf("request_id %v, X-Request-Id %q: want equal and non-empty", p["request_id"], id)
	}
	if d, _ := p["detail"].(string); d == "" {
		t.Errorf("problem without detail: %s", resp.body)
	}
}

// TestSettlementProcessed posts a B2C sale to Germany and checks the record
// against facts derived here from the request: the German standard rate,
// the ECB rate of the day, and the EN 16931 arithmetic.
func TestSettlementProcessed(t *testing.T) {
	f := newFixture(t)
	resp := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if resp.status != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	var rec struct {
		ID             string
		Custody        string
		ReviewStatus   string
		Classification struct {
			Regime          string
			TaxCategoryCode string
			RatePercent     json.Number
			TaxingCountry   string
		}
		FX struct {
			Pair, AmountUsdc, GrossEur, NetEur, VatEur string
			UsdPerEur                                  struct{ Raw, RateDate string }
		}
		Invoice struct{ UblSha256, URL string }
		Receipt struct{ ID, URL string }
	}
	dec := json.NewDecoder(bytes.NewReader(resp.body))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.ID, "x402-") || rec.Custody != "none" || rec.ReviewStatus != "PROCESSED" {
		t.Fatalf("id %q custody %q status %q", rec.ID, rec.Custody, rec.ReviewStatus)
	}
	if loc := resp.header.Get("Location"); loc != "/settlements/"+rec.ID {
		t.Errorf("Location %q", loc)
	}
	c := rec.Classification
	if c.Regime != "OSS_B2C" || c.TaxCategoryCode != "S" || c.RatePercent != "19" || c.TaxingCountry != "DE" {
		t.Errorf("classification %+v, want OSS_B2C S 19 DE (seller IE over the Art. 59c threshold, buyer DE)", c)
	}
	// The ECB published 1.1711 USD per EUR on 2026-04-10 (series
	// EXR.D.USD.EUR.SP00.A; the embedded copy is fx/data/ecb-eurusd.csv).
	if rec.FX.UsdPerEur.Raw != "1.1711" || rec.FX.UsdPerEur.RateDate != "2026-04-10" || rec.FX.Pair != "USDC/EUR" {
		t.Errorf("fx rate %+v", rec.FX.UsdPerEur)
	}
	gross := decimal.RequireFromString("11.90").DivRound(decimal.RequireFromString("1.1711"), 2)
	net := gross.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(119), 2)
	if rec.FX.GrossEur != gross.StringFixed(2) || rec.FX.NetEur != net.StringFixed(2) || rec.FX.VatEur != gross.Sub(net).StringFixed(2) {
		t.Errorf("gross/net/vat %s/%s/%s, want %s/%s/%s", rec.FX.GrossEur, rec.FX.NetEur, rec.FX.VatEur, gross.StringFixed(2), net.StringFixed(2), gross.Sub(net).StringFixed(2))
	}

	// The record reads back byte for byte; another account cannot see it.
	got := f.do("GET", "/settlements/"+rec.ID, keyA, nil)
	if got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(resp.body)) {
		t.Errorf("GET record: %d, equal=%v", got.status, bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(resp.body)))
	}
	assertProblem(t, f.do("GET", "/settlements/"+rec.ID, keyB, nil), 404, "NOT_FOUND", "")
	assertProblem(t, f.do("GET", "/settlements/"+rec.ID, "", nil), 401, "AUTHENTICATION_FAILED", "")

	// The UBL is served as stored: its hash is the record's, with a strong ETag.
	ubl := f.do("GET", rec.Invoice.URL, keyA, nil)
	if ubl.status != 200 || ubl.header.Get("Content-Type") != "application/xml" {
		t.Fatalf("ubl: %d %s", ubl.status, ubl.header.Get("Content-Type"))
	}
	sum := sha256.Sum256(ubl.body)
	if hex.EncodeToString(sum[:]) != rec.Invoice.UblSha256 {
		t.Errorf("UBL sha256 %x, record says %s", sum, rec.Invoice.UblSha256)
	}
	etag := ubl.header.Get("ETag")
	if etag != `"sha256-`+rec.Invoice.UblSha256+`"` {
		t.Errorf("ETag %q", etag)
	}
	if nm := f.do("GET", rec.Invoice.URL, keyA, nil, "If-None-Match", etag); nm.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", nm.status)
	}
	for _, want := range []string{"<cbc:TaxAmount currencyID=\"EUR\">" + rec.FX.VatEur, "<cbc:PayableAmount currencyID=\"EUR\">0.00", "<cbc:Percent>19</cbc:Percent>"} {
		if !bytes.Contains(ubl.body, []byte(want)) {
			t.Errorf("UBL lacks %s", want)
		}
	}
	assertProblem(t, f.do("GET", rec.Invoice.URL, keyB, nil), 404, "NOT_FOUND", "")

	// The receipt is public and verifies offline with the JWKS and the log key.
	rc := f.do("GET", rec.Receipt.URL, "", nil)
	if rc.status != 200 {
		t.Fatalf("receipt: %d %s", rc.status, rc.body)
	}
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil)
	if jwks.status != 200 || jwks.header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("jwks: %d %s", jwks.status, jwks.header.Get("Content-Type"))
	}
	public, err := receipt.Verify(rc.body, jwks.body, f.engine.LogVerifierKey())
	if err != nil {
		t.Fatalf("receipt does not verify: %v", err)
	}
	// Nothing personal in clear: the tx hash, the wallets and the invoice's
	// hash are commitments the account can open.
	if public.Settlement.TxHash != "" || public.Settlement.Payer != "" || public.Invoice.UBLSHA256 != "" || len(public.Commitments) == 0 {
		t.Errorf("public receipt shows committed fields: %+v", public.Settlement)
	}
	if strings.Contains(strings.ToLower(string(rc.body)), "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f") ||
		strings.Contains(strings.ToLower(string(rc.body)), "0x70997970c51812dc3a010c7d01b50e0d17dc79c8") {
		t.Errorf("the public receipt carries the tx hash or the payer in clear")
	}
	claims := verifyReceipt(t, f, rec.Receipt.ID)
	if claims.ReceiptID != rec.Receipt.ID || claims.EventID != rec.ID || claims.Invoice == nil || claims.Invoice.UBLSHA256 != rec.Invoice.UblSha256 {
		t.Errorf("claims %+v do not bind the record", claims)
	}
	if claims.FX == nil || claims.FX.VATEUR != rec.FX.VatEur || claims.Classification.RatePercent != "19" {
		t.Errorf("claims fx/classification %+v %+v", claims.FX, claims.Classification)
	}
}

// TestSettlementPending covers the two review reasons of the foundation:
// no buyer country (never 0 % VAT) and no ECB rate yet for the date.
func TestSettlementPending(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name   string
		body   map[string]any
		reason string
		fx     bool // an EUR gross amount is known
		taxed  bool // the VAT treatment itself is determined
	}{
		{"no consumer country", settlement(map[string]any{"consumerCountry": nil, "txHash": txHash(1)}), "buyer_country_missing", true, false},
		{"after the last ECB publication", settlement(map[string]any{"timestamp": "2026-04-15T10:00:00Z", "txHash": txHash(2)}), "fx_rate_unavailable", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.do("POST", "/settlements", keyA, mustJSON(t, tc.body))
			if resp.status != 201 {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			rec := resp.json(t)
			if rec["reviewStatus"] != "PENDING_MANUAL_REVIEW" {
				t.Fatalf("reviewStatus %v", rec["reviewStatus"])
			}
			reasons := fmt.Sprint(rec["reviewReasons"])
			if !strings.Contains(reasons, tc.reason) {
				t.Errorf("reviewReasons %s lack %s", reasons, tc.reason)
			}
			fxo := rec["fx"].(map[string]any)
			if _, ok := fxo["vatEur"]; ok {
				t.Errorf("a pending record states a VAT amount: %v", fxo)
			}
			if _, ok := fxo["grossEur"]; ok != tc.fx {
				t.Errorf("grossEur present=%v, want %v", ok, tc.fx)
			}
			cl := rec["classification"].(map[string]any)
			if taxed := cl["status"] == "DETERMINED"; taxed != tc.taxed {
				t.Errorf("classification status %v, want determined=%v", cl["status"], tc.taxed)
			}
			if !tc.taxed && (cl["taxCategoryCode"] != nil || cl["ratePercent"] != nil) {
				t.Errorf("undetermined classification carries a tax category or rate: %v", cl)
			}
			if _, ok := rec["invoice"]; ok {
				t.Errorf("pending record has an invoice")
			}
			id := rec["id"].(string)
			assertProblem(t, f.do("GET", "/settlements/"+id+"/ubl", keyA, nil), 404, "NOT_FOUND", "")
			rc := f.do("GET", "/v1/receipts/rcpt_"+id, "", nil)
			jwks := f.do("GET", "/.well-known/jwks.json", "", nil)
			claims, err := receipt.Verify(rc.body, jwks.body, f.engine.LogVerifierKey())
			if err != nil {
				t.Fatalf("pending receipt: %v", err)
			}
			if claims.ReviewStatus != "PENDING_MANUAL_REVIEW" || !strings.Contains(strings.Join(claims.ReviewReasons, ","), tc.reason) {
				t.Errorf("receipt review %s %v", claims.ReviewStatus, claims.ReviewReasons)
			}
		})
	}
}

// TestSettlementIdempotency checks the idempotency rules (Idempotency-Key
// optional; same key and body replays; same key, other body is 409; a
// duplicate (network, txHash) returns the existing record) and the
// cross-account rule.
func TestSettlementIdempotency(t *testing.T) {
	f := newFixture(t)
	body := mustJSON(t, settlement(nil))
	first := f.do("POST", "/settlements", keyA, body, "Idempotency-Key", "order-1")
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	// Same key, same meaning (other spelling of the amount, other key order): the original.
	same := mustJSON(t, settlement(map[string]any{"amountUsdc": "11.9"}))
	replay := f.do("POST", "/settlements", keyA, same, "Idempotency-Key", "order-1")
	if replay.status != 201 || replay.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.body, first.body) {
		t.Fatalf("replay: %d %q equal=%v", replay.status, replay.header.Get("Idempotent-Replayed"), bytes.Equal(replay.body, first.body))
	}
	// Same key, different body: 409.
	other := mustJSON(t, settlement(map[string]any{"consumerCountry": "FR"}))
	assertProblem(t, f.do("POST", "/settlements", keyA, other, "Idempotency-Key", "order-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	// No key, same (network, txHash): the existing record, 200.
	dup := f.do("POST", "/settlements", keyA, other)
	if dup.status != 200 || !bytes.Equal(dup.body, first.body) {
		t.Fatalf("duplicate: %d equal=%v", dup.status, bytes.Equal(dup.body, first.body))
	}
	// The tx hash in upper case is the same settlement.
	upper := mustJSON(t, settlement(map[string]any{"txHash": "0x" + strings.ToUpper(strings.TrimPrefix(settlement(nil)["txHash"].(string), "0x"))}))
	if up := f.do("POST", "/settlements", keyA, upper); up.status != 200 {
		t.Errorf("upper-case tx hash: %d", up.status)
	}
	// The same idempotency key in another account is another key.
	b := f.do("POST", "/settlements", keyB, mustJSON(t, settlement(map[string]any{"txHash": txHash(7)})), "Idempotency-Key", "order-1")
	if b.status != 201 {
		t.Fatalf("account b: %d %s", b.status, b.body)
	}
	// Another account cannot claim account A's settlement.
	assertProblem(t, f.do("POST", "/settlements", keyB, body), 409, "SETTLEMENT_CONFLICT", "/txHash")
	if n := f.engine.Ledger().Size(); n != 2 {
		t.Errorf("ledger size %d, want 2", n)
	}
}

// TestSettlementSurvivesRestart reopens the engine on the same directory.
func TestSettlementSurvivesRestart(t *testing.T) {
	f := newFixture(t)
	resp := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if resp.status != 201 {
		t.Fatal(resp.status)
	}
	id := resp.json(t)["id"].(string)
	receiptBefore := f.do("GET", "/v1/receipts/rcpt_"+id, "", nil).body
	f.reopen()
	got := f.do("GET", "/settlements/"+id, keyA, nil)
	if got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(resp.body)) {
		t.Fatalf("after restart: %d", got.status)
	}
	if after := f.do("GET", "/v1/receipts/rcpt_"+id, "", nil).body; !bytes.Equal(after, receiptBefore) {
		t.Errorf("receipt changed across a restart")
	}
	if err := f.engine.Ledger().Check(); err != nil {
		t.Errorf("ledger check: %v", err)
	}
}

// TestEveryResponseHasRequestID includes routing errors: unknown paths and
// wrong methods are problem documents too.
func TestEveryResponseHasRequestID(t *testing.T) {
	f := newFixture(t)
	assertProblem(t, f.do("GET", "/nope", "", nil), 404, "NOT_FOUND", "")
	assertProblem(t, f.do("DELETE", "/settlements", keyA, nil), 405, "METHOD_NOT_ALLOWED", "")
	assertProblem(t, f.do("GET", "/v1/receipts/rcpt_x402-unknown", "", nil), 404, "NOT_FOUND", "")
	ok := f.do("GET", "/.well-known/jwks.json", "", nil)
	if ok.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on a 200")
	}
	echo := f.do("GET", "/.well-known/jwks.json", "", nil, "X-Request-Id", "trace-abc.123")
	if got := echo.header.Get("X-Request-Id"); got != "trace-abc.123" {
		t.Errorf("inbound request id not kept: %q", got)
	}
	bad := f.do("GET", "/.well-known/jwks.json", "", nil, "X-Request-Id", "bad id with spaces")
	if got := bad.header.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("malformed inbound request id echoed: %q", got)
	}
}

// TestSettlementIdempotencyCoversTheAddress: the customer's postal address
// (consumerAddress) is part of what a settlement asks (a business sale's
// invoice states it), so the same Idempotency-Key with another address is
// another request, 409, not a replay of the first; the same address
// spelled with other member order replays.
func TestSettlementIdempotencyCoversTheAddress(t *testing.T) {
	f := newFixture(t)
	addr := func(city string) map[string]any {
		return settlement(map[string]any{"consumerPostalCode": nil, "consumerAddress": map[string]any{"street": "Invalidenstraße 116", "city": city, "postalCode": "10115", "country": "DE"}})
	}
	first := f.do("POST", "/settlements", keyA, mustJSON(t, addr("Berlin")), "Idempotency-Key", "order-addr")
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	replay := f.do("POST", "/settlements", keyA, mustJSON(t, addr("Berlin")), "Idempotency-Key", "order-addr")
	if replay.status != 201 || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("same address: %d %q %s", replay.status, replay.header.Get("Idempotent-Replayed"), replay.body)
	}
	assertProblem(t, f.do("POST", "/settlements", keyA, mustJSON(t, addr("Potsdam")), "Idempotency-Key", "order-addr"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	assertProblem(t, f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)), "Idempotency-Key", "order-addr"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
}

// TestSettlementCharsetUTF8: a JSON body may declare its charset only as
// UTF-8 (RFC 8259 section 8.1), in any case and quoted or not; each such
// request is recorded like one without the parameter.
func TestSettlementCharsetUTF8(t *testing.T) {
	f := newFixture(t)
	for i, ct := range []string{"application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""} {
		body := mustJSON(t, settlement(map[string]any{"txHash": txHash(900 + i)}))
		if resp := f.do("POST", "/settlements", keyA, body, "Content-Type", ct); resp.status != http.StatusCreated {
			t.Errorf("Content-Type %q: status %d: %s", ct, resp.status, resp.body)
		}
	}
}

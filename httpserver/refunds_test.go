package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// problemCode checks that r is a problem+json answer with the status and
// code, and returns its body.
func problemCode(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %s, want %d problem+json: %s", r.status, r.header.Get("Content-Type"), status, r.body)
	}
	p := r.json(t)
	if p["code"] != code {
		t.Fatalf("code %v, want %s: %s", p["code"], code, r.body)
	}
	return p
}

// TestRefundRoutes: partial and full refunds over HTTP, replays and
// conflicts, the refunds in the record, the refund and its credit note,
// and what another account sees.
func TestRefundRoutes(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if created.status != 201 {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	path := "/settlements/" + id + "/refunds"

	body := mustJSON(t, map[string]any{"amountUsdc": "4.90", "reason": "late delivery"})
	first := f.do("POST", path, keyA, body, "Idempotency-Key", "r-1")
	if first.status != 201 {
		t.Fatalf("%d %s", first.status, first.body)
	}
	r1 := first.json(t)
	rid := r1["id"].(string)
	if first.header.Get("Location") != path+"/"+rid || r1["object"] != "refund" || r1["amountUsdc"] != "4.900000" || r1["remainingUsdc"] != "7.000000" {
		t.Fatalf("refund %s (Location %s)", first.body, first.header.Get("Location"))
	}
	replay := f.do("POST", path, keyA, body, "Idempotency-Key", "r-1")
	if replay.status != 201 || replay.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.body, first.body) {
		t.Fatalf("replay %d %s", replay.status, replay.body)
	}
	problemCode(t, f.do("POST", path, keyA, mustJSON(t, map[string]any{"amountUsdc": "1"}), "Idempotency-Key", "r-1"), 409, "IDEMPOTENCY_CONFLICT")
	p := problemCode(t, f.do("POST", path, keyA, mustJSON(t, map[string]any{"amountUsdc": "7.000001"})), 409, "REFUND_EXCEEDS_REMAINING")
	if p["field"] != "/amountUsdc" {
		t.Errorf("over-refund problem %v", p)
	}
	problemCode(t, f.do("POST", path, keyA, mustJSON(t, map[string]any{"amountUsdc": "1", "extra": true})), 400, "BAD_REQUEST")
	problemCode(t, f.do("POST", path, keyB, body), 404, "NOT_FOUND")
	problemCode(t, f.do("POST", path, "", body), 401, "AUTHENTICATION_FAILED")

	// The rest (no amount), then nothing remains.
	full := f.do("POST", path, keyA, []byte(`{}`))
	if full.status != 201 || full.json(t)["full"] != true || full.json(t)["amountUsdc"] != "7.000000" {
		t.Fatalf("full refund %d %s", full.status, full.body)
	}
	problemCode(t, f.do("POST", path, keyA, []byte(`{}`)), 409, "REFUND_EXCEEDS_REMAINING")

	// The record shows its refunds.
	rec := f.do("GET", "/settlements/"+id, keyA, nil)
	var view struct {
		ID      string `json:"id"`
		Refunds struct {
			RefundedUSDC  string            `json:"refundedUsdc"`
			RemainingUSDC string            `json:"remainingUsdc"`
			Items         []json.RawMessage `json:"items"`
		} `json:"refunds"`
	}
	if err := json.Unmarshal(rec.body, &view); err != nil || view.Refunds.RefundedUSDC != "11.900000" || view.Refunds.RemainingUSDC != "0.000000" ||
		len(view.Refunds.Items) != 2 || !bytes.Equal(view.Refunds.Items[0], bytes.TrimSpace(first.body)) {
		t.Fatalf("record with refunds: %s (%v)", rec.body, err)
	}

	// The refund and its credit note.
	got := f.do("GET", path+"/"+rid, keyA, nil)
	if got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(first.body)) {
		t.Fatalf("GET refund %d %s", got.status, got.body)
	}
	cn := f.do("GET", path+"/"+rid+"/ubl", keyA, nil)
	sum := sha256.Sum256(cn.body)
	if cn.status != 200 || cn.header.Get("Content-Type") != "application/xml" || cn.header.Get("ETag") != `"sha256-`+hex.EncodeToString(sum[:])+`"` ||
		!bytes.Contains(cn.body, []byte("<CreditNote ")) || !bytes.Contains(cn.body, []byte("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>")) {
		t.Fatalf("credit note %d %v %.300s", cn.status, cn.header, cn.body)
	}
	if r1["creditNote"].(map[string]any)["ublSha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("credit note hash %v", r1["creditNote"])
	}
	if nm := f.do("GET", path+"/"+rid+"/ubl", keyA, nil, "If-None-Match", cn.header.Get("ETag")); nm.status != 304 {
		t.Errorf("conditional GET %d", nm.status)
	}
	problemCode(t, f.do("GET", path+"/"+rid+"/ubl", keyB, nil), 404, "NOT_FOUND")
	problemCode(t, f.do("GET", path+"/"+id+"-refund-9", keyA, nil), 404, "NOT_FOUND")
	problemCode(t, f.do("GET", "/settlements/x402-00000000000000000000000000000000/refunds/"+rid, keyA, nil), 404, "NOT_FOUND")

	// Its receipt is public like any receipt.
	rc := f.do("GET", "/v1/receipts/rcpt_"+rid, "", nil)
	var doc struct {
		Claims struct {
			Supersedes string `json:"supersedes"`
		} `json:"claims"`
	}
	if rc.status != 200 || json.Unmarshal(rc.body, &doc) != nil || doc.Claims.Supersedes != "rcpt_"+id {
		t.Fatalf("refund receipt %d %.400s", rc.status, rc.body)
	}
}

// TestRefundOfPendingOverHTTP: a record pending review is refused with a
// problem that says what to do.
func TestRefundOfPendingOverHTTP(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil})))
	if created.status != 201 {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	p := problemCode(t, f.do("POST", "/settlements/"+id+"/refunds", keyA, []byte(`{"amountUsdc":"1"}`)), 409, "RECORD_PENDING_REVIEW")
	if !strings.Contains(p["detail"].(string), "/resolve") {
		t.Errorf("detail %v", p["detail"])
	}
	if rec := f.do("GET", "/settlements/"+id, keyA, nil); bytes.Contains(rec.body, []byte(`"refunds"`)) {
		t.Errorf("a record without refunds shows refunds: %s", rec.body)
	}
}

// TestIdempotencyKeyHeaderForm: an Idempotency-Key header that is sent
// empty, or twice, is a 400 naming the header on every endpoint that takes
// one, and does nothing: never a request without a key (whose retry would
// record the refund twice), never "the first one wins".
func TestIdempotencyKeyHeaderForm(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if created.status != 201 {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	send := func(path string, body []byte, keys ...string) response {
		req, err := http.NewRequest("POST", f.srv.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Key", keyA)
		req.Header["Idempotency-Key"] = keys
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: raw}
	}
	posts := []struct {
		path string
		body []byte
	}{
		{"/settlements/" + id + "/refunds", []byte(`{"amountUsdc":"1"}`)},
		{"/settlements", mustJSON(t, settlement(map[string]any{"txHash": txHash(2)}))},
		{"/settlements/" + id + "/resolve", []byte(`{"resolvedBy":"ops@example.com"}`)},
		{"/v1/fiscal-events", mustJSON(t, fiscalEventBody(nil))},
		{"/v1/fiscal-events/x402-00000000000000000000000000000000/resolve", []byte(`{"resolvedBy":"ops@example.com"}`)},
		{"/v1/x402/settlements", []byte(`{}`)},
	}
	for _, p := range posts {
		for _, keys := range [][]string{{""}, {"a-1", "a-2"}} {
			r := send(p.path, p.body, keys...)
			if r.status != 400 || r.json(t)["field"] != "Idempotency-Key" {
				t.Errorf("%s with Idempotency-Key %q: %d %.200s", p.path, keys, r.status, r.body)
			}
		}
	}
	rec := f.do("GET", "/settlements/"+id, keyA, nil)
	if bytes.Contains(rec.body, []byte(`"refunds"`)) {
		t.Errorf("a refund was recorded: %.200s", rec.body)
	}
	if r := f.do("GET", "/settlements/x402-"+strings.Repeat("0", 32), keyA, nil); r.status != 404 {
		t.Errorf("%d", r.status)
	}
}

// TestServiceKeySentTwiceIsRefused: two X-Service-Key headers name two
// accounts (or one twice); the first was silently taken. Which one a
// client meant is not for the server to guess: 401 naming the header,
// on a required key and on an optional one.
func TestServiceKeySentTwiceIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ method, path string }{{"GET", "/settlements"}, {"POST", "/v1/capabilities/check"}} {
		req, err := http.NewRequest(c.method, f.srv.URL+c.path, bytes.NewReader([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header["X-Service-Key"] = []string{keyA, keyB}
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := response{status: resp.StatusCode, header: resp.Header, body: raw}
		if p := problemCode(t, r, 401, "AUTHENTICATION_FAILED"); p["field"] != "X-Service-Key" {
			t.Errorf("%s %s with two keys: field %v, %.200s", c.method, c.path, p["field"], raw)
		}
	}
}

package httpserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestReceiptByRecordIDIsNotImmutable: GET /v1/receipts/{id} also takes a
// record id, and answers that record's current receipt (fiscal.Engine.Receipt),
// which a revision replaces. Such an answer must not be cached as immutable
// for a year (RFC 8246 §2: "immutable" says the representation will not
// change), or every shared cache keeps serving the superseded receipt after
// the record was resolved. A receipt id (rcpt_<entry id>) names one ledger
// entry, whose receipt never changes, and stays immutable.
func TestReceiptByRecordIDIsNotImmutable(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil})))
	if created.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", created.status, created.body)
	}
	rec := created.json(t)
	id := rec["id"].(string)
	firstReceipt := rec["receipt"].(map[string]any)["id"].(string)

	before := f.do("GET", "/v1/receipts/"+id, "", nil)
	if before.status != http.StatusOK {
		t.Fatalf("receipt by record id: %d %s", before.status, before.body)
	}
	r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`))
	if r.status != http.StatusCreated {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	after := f.do("GET", "/v1/receipts/"+id, "", nil)
	if after.status != http.StatusOK {
		t.Fatalf("receipt by record id after the revision: %d %s", after.status, after.body)
	}
	if bytes.Equal(before.body, after.body) {
		t.Fatalf("the record's receipt did not change with its revision; the test proves nothing")
	}
	if cc := before.header.Get("Cache-Control"); strings.Contains(cc, "immutable") || strings.Contains(cc, "max-age=31536000") {
		t.Errorf("GET /v1/receipts/%s answered Cache-Control %q, and then another receipt for the same URL after the revision", id, cc)
	}
	if etag := after.header.Get("ETag"); etag == "" || etag == before.header.Get("ETag") {
		t.Errorf("ETag %q after the revision, %q before: a cache revalidating cannot tell them apart", etag, before.header.Get("ETag"))
	}
	if cond := f.do("GET", "/v1/receipts/"+id, "", nil, "If-None-Match", before.header.Get("ETag")); cond.status != http.StatusOK || !bytes.Equal(cond.body, after.body) {
		t.Errorf("revalidating the old receipt: %d, want 200 with the current one", cond.status)
	}
	old := f.do("GET", "/v1/receipts/"+firstReceipt, "", nil)
	if old.status != http.StatusOK || !bytes.Equal(old.body, before.body) || !strings.Contains(old.header.Get("Cache-Control"), "immutable") {
		t.Errorf("GET /v1/receipts/%s: %d %q: a receipt id's answer never changes and stays immutable", firstReceipt, old.status, old.header.Get("Cache-Control"))
	}
}

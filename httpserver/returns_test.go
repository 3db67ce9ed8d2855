package httpserver_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/returns"
)

// TestReturnsEndpoints: the OSS return, its records and the export, over
// HTTP with the real server: key required, each account sees its own
// records only, the JSON return's signature verifies with the published
// key set.
func TestReturnsEndpoints(t *testing.T) {
	f := newFixture(t)
	type post struct{ key, country, amount, at string }
	posts := []post{
		{keyA, "DE", "11.90", "2026-01-15T10:00:00Z"}, {keyA, "DE", "23.80", "2026-02-15T10:00:00Z"},
		{keyA, "FR", "12.00", "2026-03-01T10:00:00Z"}, {keyA, "", "5.00", "2026-03-02T10:00:00Z"},
		{keyB, "DE", "99.00", "2026-02-01T10:00:00Z"}, {keyA, "DE", "11.90", "2026-04-10T10:00:00Z"},
	}
	for i, p := range posts {
		body := settlement(map[string]any{"txHash": txHash(700 + i), "amountUsdc": p.amount, "timestamp": p.at, "consumerCountry": p.country})
		if p.country == "" {
			delete(body, "consumerCountry")
		}
		if r := f.do("POST", "/settlements", p.key, mustJSON(t, body)); r.status != 201 {
			t.Fatalf("post %d: %d %s", i, r.status, r.body)
		}
	}

	r := f.do("GET", "/v1/returns/oss?period=2026-Q1", keyA, nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var doc returns.Document
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	payload, _, err := receipt.VerifyStatement(doc.JWS, jwks, returns.StatementType)
	if err != nil || !bytes.Equal(payload, doc.Return) {
		t.Fatalf("signature: %v", err)
	}
	var ret returns.Return
	if err := json.Unmarshal(doc.Return, &ret); err != nil {
		t.Fatal(err)
	}
	// Provisional: a record of the quarter waits for review (Art. 369g).
	if ret.Account != "acct_a" || ret.Status != returns.StatusProvisional || !strings.Contains(ret.StatusReason, "excluded.pending") || len(ret.Lines) != 2 || ret.Total.Records != 3 ||
		ret.Total.AmountUSDC != "47.700000" || ret.Excluded.Pending.Records != 1 {
		t.Fatalf("return %s", doc.Return)
	}
	// The same bytes again while nothing is written; and asked for by its
	// member state of identification, the same return.
	if again := f.do("GET", "/v1/returns/oss?period=2026-Q1", keyA, nil); !bytes.Equal(again.body, r.body) {
		t.Fatal("the return changed")
	}
	if named := f.do("GET", "/v1/returns/oss?period=2026-Q1&memberStateOfIdentification=IE", keyA, nil); !bytes.Equal(named.body, r.body) {
		t.Fatalf("Ireland's return asked by name differs: %d %s", named.status, named.body)
	}

	c := f.do("GET", "/v1/returns/oss?period=2026-Q1&format=csv", keyA, nil)
	rows, err := csv.NewReader(bytes.NewReader(c.body)).ReadAll()
	review := ret.Review
	if ret.ID.Missing != "" {
		review = append([]string{"identification: " + ret.ID.Missing}, review...)
	}
	if c.status != 200 || c.header.Get("Content-Type") != "text/csv; charset=utf-8" || err != nil || len(rows) != 1+len(review)+2+len(ret.MemberStates)+1+1 {
		t.Fatalf("CSV %d %v: %s", c.status, err, c.body)
	}
	// The CSV warns as the JSON does: its review rows first (what the
	// identification lacks, then the review items), the text in the last
	// column.
	for i, text := range review {
		if row := rows[1+i]; row[5] != returns.SectionReview || row[len(row)-1] != text {
			t.Errorf("CSV row %d %q, want the review item %q", 1+i, row, text)
		}
	}

	rec := f.do("GET", "/v1/returns/oss/records?period=2026-Q1&memberState=DE", keyA, nil)
	var records httpserver.OSSRecords
	if rec.status != 200 || json.Unmarshal(rec.body, &records) != nil || len(records.Data) != 2 || records.MemberState != "DE" {
		t.Fatalf("records %d %s", rec.status, rec.body)
	}
	if rc := f.do("GET", "/v1/returns/oss/records?period=2026-Q1&memberState=DE&format=csv", keyA, nil); rc.status != 200 || strings.Count(string(rc.body), "\n") != 3 {
		t.Fatalf("records CSV %d %s", rc.status, rc.body)
	}

	ex := f.do("GET", "/settlements/export?format=jsonl", keyA, nil)
	if ex.status != 200 || ex.header.Get("Content-Type") != "application/jsonl" || strings.Count(string(ex.body), "\n") != 5 {
		t.Fatalf("export %d %s", ex.status, ex.body)
	}
	if strings.Contains(string(ex.body), txHash(704)) {
		t.Fatal("account B's record in account A's export")
	}
	if ec := f.do("GET", "/settlements/export", keyA, nil); ec.status != 200 || !strings.HasPrefix(string(ec.body), "id,type,createdAt,") || strings.Count(string(ec.body), "\n") != 6 {
		t.Fatalf("CSV export %d %s", ec.status, ec.body)
	}

	// Bad requests and missing keys change nothing and say what is wrong.
	for _, c := range []struct {
		path, key, field string
		status           int
	}{
		{"/v1/returns/oss?period=2026-Q1", "", "", 401},
		{"/v1/returns/oss", keyA, "period", 400},
		{"/v1/returns/oss?period=2026-Q9", keyA, "period", 400},
		{"/v1/returns/oss?period=2026-Q1&format=xml", keyA, "format", 400},
		{"/v1/returns/oss?period=2026-Q1&country=DE", keyA, "country", 400},
		{"/v1/returns/oss?period=2027-Q1", keyA, "period", 400},
		{"/v1/returns/oss?period=2026-Q1&memberStateOfIdentification=FR", keyA, "memberStateOfIdentification", 400},
		{"/v1/returns/oss?period=2026-Q1&memberStateOfIdentification=France", keyA, "memberStateOfIdentification", 400},
		{"/v1/returns/oss/records?period=2026-Q1", keyA, "memberState", 400},
		{"/v1/returns/oss/records?period=2026-Q1&memberState=US", keyA, "memberState", 400},
		{"/v1/returns/oss/records?period=2026-Q1&memberState=DE", "", "", 401},
		{"/settlements/export?format=xml", keyA, "format", 400},
		{"/settlements/export?from=yesterday", keyA, "from", 400},
		{"/settlements/export", "", "", 401},
	} {
		got := f.do("GET", c.path, c.key, nil)
		if got.status != c.status || !strings.HasPrefix(got.header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s", c.path, got.status, got.body)
			continue
		}
		if c.field != "" && got.json(t)["field"] != c.field {
			t.Errorf("%s: field %v, want %s", c.path, got.json(t)["field"], c.field)
		}
	}
}

// TestOSSRecordsMemberStateEL: asked for Greece as EL (its VAT prefix, which
// the endpoint reads as GR), the records' document names the member state
// its rows are for, GR, not the spelling of the request.
func TestOSSRecordsMemberStateEL(t *testing.T) {
	f := newFixture(t)
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": "GR", "timestamp": "2026-02-10T10:00:00Z"}))); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for _, ms := range []string{"el", "EL", "gr"} {
		r := f.do("GET", "/v1/returns/oss/records?period=2026-Q1&memberState="+ms, keyA, nil)
		var doc httpserver.OSSRecords
		if err := json.Unmarshal(r.body, &doc); r.status != 200 || err != nil || len(doc.Data) != 1 {
			t.Fatalf("%s: %d %s", ms, r.status, r.body)
		}
		if doc.MemberState != "GR" || doc.Data[0].MemberState != "GR" {
			t.Errorf("memberState=%s: the document says %q, its row %q; want GR", ms, doc.MemberState, doc.Data[0].MemberState)
		}
	}
}

// TestUnknownParametersSameError: the same query with several unknown
// parameters gets the same problem each time, naming the first in order,
// as the listing's parameters do.
func TestUnknownParametersSameError(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/v1/returns/oss?period=2026-Q1", "/v1/returns/oss/records?period=2026-Q1&memberState=DE", "/settlements/export?format=csv", "/v1/events?limit=5"} {
		for i := 0; i < 20; i++ {
			r := f.do("GET", path+"&zeta=1&alpha=1&mu=1", keyA, nil)
			if p := problemCode(t, r, 400, "BAD_REQUEST"); p["field"] != "alpha" {
				t.Fatalf("%s, try %d: field %v, want alpha", path, i, p["field"])
			}
		}
	}
}

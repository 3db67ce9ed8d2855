package httpserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/listing"
)

// documentedCodes returns the problem codes the document lists for an
// operation's answer at status (nil when the status is not documented).
func (d openAPIDoc) documentedCodes(t *testing.T, method, path string, status int) []string {
	t.Helper()
	schema, err := d.responseSchema(method, path, status, "application/problem+json")
	if err != nil {
		return nil
	}
	var codes []string
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			s = d.resolve(ref)
		}
		for _, sub := range s["allOf"].([]any) {
			m := sub.(map[string]any)
			if props, ok := m["properties"].(map[string]any); ok {
				if code, ok := props["code"].(map[string]any); ok {
					codes = append(codes, asStrings(code["enum"])...)
				}
			}
		}
	}
	walk(schema)
	return codes
}

// TestProblemStatusesDocumented provokes, on every route, the problem
// answers that do not depend on the route's own logic, and checks that the
// document lists each status with that code: 401 without a key and 429
// past the rate limit on every keyed route, 429 from an address blocked
// for wrong keys on every route that reads a key, and 400, 413 and 415 on
// every route that takes a body.
func TestProblemStatusesDocumented(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	// A second server on the same engine whose rate limit allows one
	// request now and the next in a day.
	limited := httptest.NewServer(newHandler(t, f.engine, httpserver.Options{Logger: quiet, PublicURL: publicURL, RateLimit: rate.Every(24 * time.Hour), RateBurst: 1}))
	defer limited.Close()
	lim := &fixture{t: t, srv: limited}
	lim.do("GET", "/settlements", keyA, nil) // takes the one token
	// A third whose limit on failed authentication blocks the client's
	// address (every request of the test's) at its second wrong key.
	blockedSrv := httptest.NewServer(newHandler(t, f.engine, httpserver.Options{Logger: quiet, PublicURL: publicURL, RateLimit: rate.Inf,
		AuthFailureRate: rate.Every(24 * time.Hour), AuthFailureBurst: 1}))
	defer blockedSrv.Close()
	blocked := &fixture{t: t, srv: blockedSrv}
	blocked.do("GET", "/settlements", "sk_wrong", nil)
	blocked.do("GET", "/settlements", "sk_wrong", nil)

	auth := httpserver.RouteAuth(f.handler)
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, key := range httpserver.RouteKeys(f.handler) {
		method, path, _ := strings.Cut(key, " ")
		concrete := param.ReplaceAllString(path, "nope")
		op := doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
		_, takesBody := op["requestBody"]
		var body []byte
		if takesBody {
			body = []byte(`{}`)
		}
		check := func(what string, r response, status int, code fiscal.Code) {
			t.Helper()
			if r.status != status {
				t.Errorf("%s %s: status %d, want %d: %s", key, what, r.status, status, r.body)
				return
			}
			var p struct{ Code string }
			_ = json.Unmarshal(r.body, &p)
			if p.Code != string(code) {
				t.Errorf("%s %s: code %q, want %s", key, what, p.Code, code)
			}
			if codes := doc.documentedCodes(t, method, path, status); !slices.Contains(codes, string(code)) {
				t.Errorf("%s answers %d %s (%s), which its document does not list (it lists %v)", key, status, code, what, codes)
			}
			assertDocumented(t, doc, method, path, r)
		}
		if auth[key] {
			check("without a key", f.do(method, concrete, "", body), 401, fiscal.CodeAuthenticationFailed)
			check("past the rate limit", lim.do(method, concrete, keyA, body), 429, "RATE_LIMITED")
		}
		if security, _ := op["security"].([]any); len(security) > 0 && len(security[len(security)-1].(map[string]any)) > 0 {
			// Any key, required or optional, is read under the limit of
			// failed authentication.
			check("with a key from a blocked address", blocked.do(method, concrete, keyA, body), 429, "RATE_LIMITED")
		}
		if takesBody {
			k := ""
			if auth[key] {
				k = keyA
			}
			check("with a text body", f.do(method, concrete, k, []byte("x"), "Content-Type", "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE")
			check("with a large body", f.do(method, concrete, k, append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), int(fiscal.MaxRequestBytes)+1)...), '"', '}')), 413, "PAYLOAD_TOO_LARGE")
			check("with a body that is not JSON", f.do(method, concrete, k, []byte(`{`)), 400, fiscal.CodeBadRequest)
		}
	}
}

// TestSchemaFormatsCover: every string member whose name says it is a
// hash, a wallet, a country, an amount, a network or a date has a pattern,
// an enum or a format in the document (or is named here with the reason it
// has none).
func TestSchemaFormatsCover(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	says := regexp.MustCompile(`(?i:hash|wallet|country|amount|network|date|timestamp|created|payer|receiver|sha256)|Eur$|_eur$|Usdc$|_usdc$|At$|_at$|^at$`)
	exempt := map[string]string{
		"FxRate.snapshot":                           "a snapshot name (\"embedded:sha256:…\"), not a digest",
		"ReceiptFXRate.snapshot":                    "the same",
		"ReceiptFX.pair":                            "a currency pair",
		"X402SettleResponse.amount":                 "x402 atomic units as the facilitator wrote them; checked by the ingest, not the schema",
		"X402PaymentRequirements.amount":            "the same",
		"X402PaymentRequirements.maxAmountRequired": "the same (x402 v1)",
		"X402SettleResponse.network":                "x402 v1 names networks (\"base\"): the ingest maps them",
		"X402PaymentRequirements.network":           "the same",
		"X402PaymentPayload.network":                "the same",
		"WebhookSignature.timestamp_header":         "a header name",
		"OSSReturn.dueDateBasis":                    "the legal basis of dueDate, a sentence",
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var missing []string
	for name, s := range schemas {
		props, _ := s.(map[string]any)["properties"].(map[string]any)
		for member, ps := range props {
			p := ps.(map[string]any)
			if one, ok := p["oneOf"].([]any); ok {
				p = one[0].(map[string]any)
			}
			if p["type"] != "string" || !says.MatchString(member) {
				continue
			}
			if p["pattern"] != nil || p["enum"] != nil || p["format"] != nil || p["anyOf"] != nil || p["contentEncoding"] != nil {
				continue
			}
			if why, ok := exempt[name+"."+member]; ok && why != "" {
				continue
			}
			missing = append(missing, name+"."+member)
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s is a string without pattern, enum or format", m)
	}
}

// TestPageDocsMatchPage: the typed page documents have exactly the members
// of listing.Page, which the list handlers encode.
func TestPageDocsMatchPage(t *testing.T) {
	want := jsonMembers(reflect.TypeFor[listing.Page]())
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	for _, name := range []string{"SettlementPage", "FiscalEventPage"} {
		s := doc.resolve("#/components/schemas/" + name)
		var got []string
		for m := range s["properties"].(map[string]any) {
			got = append(got, m)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s members %v, listing.Page has %v", name, got, want)
		}
	}
}

func jsonMembers(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestOpenAPISpectral lints the document with Spectral (pinned in
// .ci/package.json) and its whole OpenAPI ruleset, hints included, except
// the rules testdata/spectral.yaml turns off and explains: any finding
// fails.
func TestOpenAPISpectral(t *testing.T) {
	spectral := testtool.File(t, "spectral (npm ci --prefix .ci)", filepath.Join("..", ".ci", "node_modules", ".bin", "spectral"))
	testtool.LookPath(t, "node")
	f := newDocFixture(t, false, testNow)
	r := f.do("GET", "/openapi.json", "", nil)
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(spectral, "lint", "--ruleset", filepath.Join("testdata", "spectral.yaml"), "--fail-severity", "hint", "--format", "stylish", path)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No results with a severity of 'hint' or higher found!") {
		t.Fatalf("spectral lint: %v\n%s", err, out)
	}
}

// TestRequestSchemasRefuseUnknownMembers: every request body's schema
// refuses what its decoder refuses: a member the type does not have, at
// the top and in each object member of the operation's request example
// (doc.go: "request types reject unknown members, as their decoders do").
// A client that validates against the document must not send a body the
// server answers 400.
func TestRequestSchemasRefuseUnknownMembers(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			op := o.(map[string]any)
			rb, ok := op["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			media := rb["content"].(map[string]any)["application/json"].(map[string]any)
			example, ok := media["example"].(map[string]any)
			if !ok {
				t.Errorf("%s %s: no request example", method, path)
				continue
			}
			where := []string{""}
			for k, v := range example {
				if _, ok := v.(map[string]any); ok {
					where = append(where, k)
				}
			}
			for _, at := range where {
				body := clone(example)
				target := body
				if at != "" {
					target = body[at].(map[string]any)
				}
				target["zzUnknown"] = true
				pointer := "/" + at + "/zzUnknown"
				if at == "" {
					pointer = "/zzUnknown"
				}
				r := f.do(strings.ToUpper(method), param.ReplaceAllString(path, "nope"), keyA, mustJSON(t, body))
				var p struct{ Code, Field string }
				_ = json.Unmarshal(r.body, &p)
				if r.status != 400 || p.Field != pointer {
					continue // the decoder takes it (an open document): nothing to compare
				}
				schema := closedSchema(doc, media["schema"].(map[string]any))
				if at != "" {
					props, _ := schema["properties"].(map[string]any)
					ps, _ := props[at].(map[string]any)
					schema = closedSchema(doc, ps)
				}
				if schema["additionalProperties"] != false {
					t.Errorf("%s %s: the server refuses %s (400 unknown field), the request schema allows it (no additionalProperties: false)", method, path, pointer)
				}
			}
		}
	}
}

// closedSchema resolves a member's schema to the object schema that says
// whether it is closed: through $ref, and the allOf or oneOf (with null)
// a description or a nullable member wraps it in.
func closedSchema(doc openAPIDoc, s map[string]any) map[string]any {
	for s != nil {
		if ref, ok := s["$ref"].(string); ok {
			s = doc.resolve(ref)
			continue
		}
		var alts []any
		if all, ok := s["allOf"].([]any); ok {
			alts = all
		} else if one, ok := s["oneOf"].([]any); ok {
			alts = one
		}
		next := map[string]any(nil)
		for _, a := range alts {
			if m := a.(map[string]any); m["type"] != "null" {
				next = m
				break
			}
		}
		if next == nil {
			return s
		}
		s = next
	}
	return map[string]any{}
}

func clone(m map[string]any) map[string]any {
	var out map[string]any
	raw, _ := json.Marshal(m)
	_ = json.Unmarshal(raw, &out)
	return out
}

// TestRequestSchemasRequireWhatTheServerRequires: a member a request schema
// marks required is one whose absence the server refuses (400 naming it):
// a client that validates against the document is not made to send what
// the service does without (POST /v1/invoices/summaries without buyer
// issues every buyer's summary).
func TestRequestSchemasRequireWhatTheServerRequires(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			rb, ok := o.(map[string]any)["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			media := rb["content"].(map[string]any)["application/json"].(map[string]any)
			example, _ := media["example"].(map[string]any)
			schema := closedSchema(doc, media["schema"].(map[string]any))
			for _, member := range asStrings(schema["required"]) {
				body := clone(example)
				delete(body, member)
				r := f.do(strings.ToUpper(method), param.ReplaceAllString(path, "nope"), keyA, mustJSON(t, body))
				var p struct{ Code, Field string }
				_ = json.Unmarshal(r.body, &p)
				if r.status == 400 || r.status == 404 || r.status == 422 && strings.HasPrefix(p.Field, "/"+member) {
					continue // refused, or answered for the missing resource before the body mattered
				}
				t.Errorf("%s %s: without %q the server answers %d %s %s; the schema requires it", method, path, member, r.status, p.Code, p.Field)
			}
		}
	}
}

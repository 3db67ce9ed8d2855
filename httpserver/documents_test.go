package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/httpserver"
)

// TestSchemaCheckerCatchesDrift: the checker that TestResponsesMatchDocument
// relies on does fail on an undocumented member, a missing required one, a
// value outside an enum and a wrong type.
func TestSchemaCheckerCatchesDrift(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	schema, err := doc.responseSchema("POST", "/settlements", 201, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	mutations := map[string]func(m map[string]any){
		"undocumented member": func(m map[string]any) { m["surprise"] = 1 },
		"nested undocumented": func(m map[string]any) { m["fx"].(map[string]any)["spread"] = "0.1" },
		"missing required":    func(m map[string]any) { delete(m, "custody") },
		"outside enum":        func(m map[string]any) { m["reviewStatus"] = "MAYBE" },
		"wrong type":          func(m map[string]any) { m["revision"] = "1" },
		"number for percent":  func(m map[string]any) { m["classification"].(map[string]any)["ratePercent"] = "19" },
	}
	var clean map[string]any
	if err := json.Unmarshal(r.body, &clean); err != nil {
		t.Fatal(err)
	}
	if errs := doc.check(schema, clean, ""); len(errs) != 0 {
		t.Fatalf("the unmodified record fails: %v", errs)
	}
	for name, mutate := range mutations {
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatal(err)
		}
		mutate(m)
		if errs := doc.check(schema, m, ""); len(errs) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// TestManifest checks GET /.well-known/service.json key by key against
// the published key list below (and the catalog values it names).
func TestManifest(t *testing.T) {
	f := newDocFixture(t, true, testNow)
	r := f.do("GET", "/.well-known/service.json", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", r.status, r.header.Get("Content-Type"))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatal(err)
	}
	keys := []string{"schema_version", "spec", "name", "description", "category", "protocol", "custody", "protocol_version",
		"tax_ruleset_version", "updated_at", "capabilities", "receipt_versions", "payment_protocols", "jurisdictions",
		"supported_chains", "supported_assets", "endpoints", "pricing", "sandbox", "security", "reliability",
		"documentation", "agent_card", "openapi", "mcp", "legal"}
	for _, k := range keys {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	if len(raw) != len(keys) {
		t.Errorf("%d keys, the manifest has %d", len(raw), len(keys))
	}
	var m struct {
		SchemaVersion     string `json:"schema_version"`
		Spec              string `json:"spec"`
		Name              string `json:"name"`
		Description       string `json:"description"`
		Category          string `json:"category"`
		Protocol          string `json:"protocol"`
		Custody           string `json:"custody"`
		ProtocolVersion   string `json:"protocol_version"`
		TaxRulesetVersion string `json:"tax_ruleset_version"`
		UpdatedAt         string `json:"updated_at"`
		Capabilities      []string
		ReceiptVersions   map[string]struct {
			Spec       string   `json:"spec"`
			Status     string   `json:"status"`
			DefaultFor []string `json:"default_for"`
			JWSType    string   `json:"jws_typ"`
			Signature  string   `json:"signature"`
		} `json:"receipt_versions"`
		PaymentProtocols []struct {
			Protocol string   `json:"protocol"`
			Status   string   `json:"status"`
			Versions []string `json:"versions"`
			Schemes  []string `json:"schemes"`
			Ingest   string   `json:"ingest"`
		} `json:"payment_protocols"`
		Jurisdictions []struct {
			ID             string `json:"id"`
			Status         string `json:"status"`
			RulesetVersion string `json:"ruleset_version"`
			Determination  string `json:"determination"`
			Artifacts      string `json:"artifacts"`
			ReceiptV1      string `json:"receipt_v1"`
			ReceiptV2      string `json:"receipt_v2"`
		} `json:"jurisdictions"`
		SupportedChains []string `json:"supported_chains"`
		SupportedAssets []struct {
			Symbol, Network, Contract string
		} `json:"supported_assets"`
		Endpoints []struct {
			Method, Path, URL, Auth string
		} `json:"endpoints"`
		Pricing struct {
			Model         string `json:"model"`
			CurrentFeeBPS int64  `json:"current_fee_bps"`
			Beta          struct {
				Active bool   `json:"active"`
				FeeBPS int64  `json:"fee_bps"`
				Label  string `json:"label"`
			} `json:"beta"`
			Standard struct {
				FeeBPS      int64  `json:"fee_bps"`
				DisplayRate string `json:"display_rate"`
			} `json:"standard"`
			Collection struct {
				Method            string `json:"method"`
				SplitOfSettlement bool   `json:"split_of_settlement"`
			} `json:"collection"`
			URL string `json:"url"`
		} `json:"pricing"`
		Sandbox struct {
			SeparateOrigin      bool `json:"separate_origin"`
			QuotaPerAgentPerDay int  `json:"quota_per_agent_per_day"`
			Price               string
			Watermarked         bool
		} `json:"sandbox"`
		Security struct {
			Custody          string `json:"custody"`
			IngestHeader     string `json:"ingest_header"`
			WebhookSignature struct {
				Algorithm     string `json:"algorithm"`
				SignedPayload string `json:"signed_payload"`
			} `json:"webhook_signature"`
			ReceiptSignature string `json:"receipt_signature"`
			Idempotency      struct {
				UniquePer []string `json:"unique_per"`
			} `json:"idempotency"`
		} `json:"security"`
		AgentCard string `json:"agent_card"`
		OpenAPI   string `json:"openapi"`
		MCP       struct {
			Implemented bool   `json:"implemented"`
			Status      string `json:"status"`
		} `json:"mcp"`
		Legal struct {
			NotTaxAdvice bool `json:"not_tax_advice"`
		} `json:"legal"`
	}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatal(err)
	}
	canonical := func(v any) string { // map keys sorted, whatever the struct order
		var x any
		if err := json.Unmarshal(mustJSON(t, v), &x); err != nil {
			t.Fatal(err)
		}
		return string(mustJSON(t, x))
	}
	eq := func(name string, got, want any) {
		t.Helper()
		if g, w := canonical(got), canonical(want); g != w {
			t.Errorf("%s = %s, want %s", name, g, w)
		}
	}
	eq("schema_version", m.SchemaVersion, "1.0")
	eq("spec", m.Spec, "service.well-known")
	eq("name", m.Name, "fiscal402")
	eq("category", m.Category, "eu_fiscal_compliance")
	eq("protocol", m.Protocol, "x402")
	eq("custody", m.Custody, "non_custodial")
	eq("protocol_version", m.ProtocolVersion, "0.3.0")
	eq("tax_ruleset_version", m.TaxRulesetVersion, "eu-vat-oss-2026.09")
	if _, err := time.Parse(time.RFC3339, m.UpdatedAt); err != nil || m.UpdatedAt == testNow.Format(time.RFC3339) {
		t.Errorf("updated_at %q: an RFC 3339 date that is not the clock", m.UpdatedAt)
	}
	if !strings.Contains(m.Description, "not tax advice") || !strings.Contains(m.Description, "never holds funds") {
		t.Errorf("description %q", m.Description)
	}
	eq("capabilities", m.Capabilities, []string{"vat_classification", "vies_lookup", "oss_b2c", "reverse_charge_b2b", "ubl_2_1", "historical_fx", "audit_ledger", "signed_webhooks", "signed_receipt", "sandbox_simulate"})
	eq("receipt_versions[1.0.0]", []any{m.ReceiptVersions["1.0.0"].Spec, m.ReceiptVersions["1.0.0"].Status, m.ReceiptVersions["1.0.0"].DefaultFor}, []any{"service.receipt/1.0.0", "supported", []string{}})
	eq("receipt_versions[2.0.0]", []any{m.ReceiptVersions["2.0.0"].Spec, m.ReceiptVersions["2.0.0"].Status, m.ReceiptVersions["2.0.0"].DefaultFor}, []any{"service.receipt/2.0.0", "experimental", []string{}})
	eq("receipt_versions[3.0.0]", []any{m.ReceiptVersions["3.0.0"].Spec, m.ReceiptVersions["3.0.0"].Status, m.ReceiptVersions["3.0.0"].DefaultFor}, []any{"service.receipt/3.0.0", "supported", []string{}})
	eq("receipt_versions[4.0.0]", []any{m.ReceiptVersions["4.0.0"].Spec, m.ReceiptVersions["4.0.0"].Status, m.ReceiptVersions["4.0.0"].DefaultFor, m.ReceiptVersions["4.0.0"].JWSType, m.ReceiptVersions["4.0.0"].Signature},
		[]any{"service.receipt/4.0.0", "supported", []string{"eu-vat", "uk-vat"}, "", "checkpoint-cosignature"})
	eq("receipt_versions keys", len(m.ReceiptVersions), 4)
	eq("payment_protocols", m.PaymentProtocols, []map[string]any{
		{"protocol": "x402", "status": "supported", "versions": []string{"2"}, "schemes": []string{"exact"}, "ingest": "http"},
		{"protocol": "evm-transfer", "status": "supported", "versions": []string{"1"}, "schemes": []string{"erc20-transfer"}, "ingest": "library"},
		{"protocol": "mpp", "status": "planned", "versions": []string{}, "schemes": []string{}, "ingest": "none"},
		{"protocol": "ap2", "status": "planned", "versions": []string{}, "schemes": []string{}, "ingest": "none"},
	})
	eq("jurisdictions", m.Jurisdictions, []map[string]any{
		{"id": "eu-vat", "status": "supported", "ruleset_version": "eu-vat-oss-2026.09", "determination": "supported", "artifacts": "supported", "receipt_v1": "supported", "receipt_v2": "unsupported"},
		{"id": "uk-vat", "status": "experimental", "ruleset_version": "uk-vat-2026.09", "determination": "supported", "artifacts": "experimental", "receipt_v1": "unsupported", "receipt_v2": "experimental"},
	})
	chains := slices.Clone(m.SupportedChains)
	slices.Sort(chains)
	eq("supported_chains", chains, []string{"eip155:1", "eip155:8453"})
	var assets []string
	for _, a := range m.SupportedAssets {
		assets = append(assets, a.Symbol+"@"+a.Network)
	}
	slices.Sort(assets)
	eq("supported_assets", assets, []string{"USDC@eip155:1", "USDC@eip155:8453"})
	eq("pricing", []any{m.Pricing.Model, m.Pricing.CurrentFeeBPS, m.Pricing.Beta.Active, m.Pricing.Beta.FeeBPS, m.Pricing.Beta.Label, m.Pricing.Standard.FeeBPS, m.Pricing.Standard.DisplayRate, m.Pricing.Collection.Method, m.Pricing.Collection.SplitOfSettlement, m.Pricing.URL},
		[]any{"basis_points", 0, true, 0, "free_during_beta", 50, "0.5%", "policy_accrual", false, publicURL + "/v1/pricing"})
	eq("sandbox", []any{m.Sandbox.SeparateOrigin, m.Sandbox.QuotaPerAgentPerDay, m.Sandbox.Price, m.Sandbox.Watermarked}, []any{false, 10, "0", true})
	eq("security", []any{m.Security.Custody, m.Security.IngestHeader, m.Security.WebhookSignature.Algorithm, m.Security.WebhookSignature.SignedPayload, m.Security.ReceiptSignature, m.Security.Idempotency.UniquePer},
		[]any{"none", "X-Service-Key", "HMAC-SHA256", "timestamp.rawBody", "ed25519", []string{"network", "txHash"}})
	eq("mcp", []any{m.MCP.Implemented, m.MCP.Status}, []any{false, "not_implemented"})
	eq("agent_card", m.AgentCard, publicURL+"/.well-known/agent-card.json")
	eq("openapi", m.OpenAPI, publicURL+"/openapi.json")
	eq("legal.not_tax_advice", m.Legal.NotTaxAdvice, true)

	// endpoints: exactly the mounted routes, with their auth.
	auth := httpserver.RouteAuth(f.handler)
	if len(m.Endpoints) != len(auth) {
		t.Errorf("%d endpoints, %d routes", len(m.Endpoints), len(auth))
	}
	for _, ep := range m.Endpoints {
		required, ok := auth[ep.Method+" "+ep.Path]
		if !ok {
			t.Errorf("endpoint %s %s is not mounted", ep.Method, ep.Path)
		}
		if (ep.Auth == "key") != required || ep.URL != publicURL+ep.Path {
			t.Errorf("endpoint %+v (route requires key: %v)", ep, required)
		}
	}
	for _, p := range []string{"/v1/reliability", "/v1/discovery", "/v1/preference", "/v1/seller-value", "/discover", "/.well-known/agent-card.json"} {
		if !slices.ContainsFunc(m.Endpoints, func(ep struct{ Method, Path, URL, Auth string }) bool { return ep.Path == p }) {
			t.Errorf("the manifest does not list %s", p)
		}
	}
}

// TestManifestFollowsConfiguration: without a registry the manifest does
// not claim VIES lookups or reverse charge; with a public URL unset, links
// follow the request's host.
func TestManifestFollowsConfiguration(t *testing.T) {
	f := newFixture(t) // no registry, no public URL
	m := f.do("GET", "/.well-known/service.json", "", nil).json(t)
	caps := asStrings(m["capabilities"])
	if slices.Contains(caps, "vies_lookup") || slices.Contains(caps, "reverse_charge_b2b") || !slices.Contains(caps, "oss_b2c") {
		t.Errorf("capabilities without a registry: %v", caps)
	}
	if got := m["openapi"]; got != f.srv.URL+"/openapi.json" {
		t.Errorf("openapi link %v, want %s", got, f.srv.URL+"/openapi.json")
	}
	catalog := f.do("GET", "/v1/capabilities", "", nil).json(t)
	for _, c := range catalog["capabilities"].([]any) {
		c := c.(map[string]any)
		if c["token"] == "vies_lookup" && (c["status"] != "unavailable" || c["reasons"] == nil) {
			t.Errorf("vies_lookup without a registry: %v", c)
		}
	}
}

// TestDocumentEndpoints: every read-only document answers 200 without a
// key (and ignores one), is cacheable with a strong ETag, answers 304 to
// If-None-Match, and carries its own facts.
func TestDocumentEndpoints(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	cases := []struct {
		path     string
		contains []string
	}{
		{"/v1/capabilities", []string{`"token": "vat_classification"`, `"api_version": "0.3.0"`, `"rates_through": "2026-04-13"`, `"coverage_to": "2026-12-31"`}},
		{"/v1/pricing", []string{`"model": "basis_points"`, `"label": "free_during_beta"`, `"display_rate": "0.5%"`, `"method": "policy_accrual"`, `"quota_per_agent_per_day": 10`, `"required": true`}},
		{"/.well-known/service.json", []string{`"spec": "service.well-known"`}},
		{"/.well-known/agent-card.json", []string{`"supportedInterfaces"`, `"protocolBinding": "OPENAPI-3.1"`, `"apiKeySecurityScheme"`, `"id": "capability_check"`}},
		{"/v1/reliability", []string{`"acknowledgement"`, `"code": "DB_UNAVAILABLE"`, `"max_request_bytes": 65536`, `"retry_after_header"`}},
		{"/v1/discovery", []string{`"rel": "service-desc"`, `"href": "` + publicURL + `/openapi.json"`, `"rel": "service-meta"`}},
		{"/v1/preference", []string{`"do_not_choose_when"`, `"code": "not_settled"`, "eip155:8453"}},
		{"/v1/seller-value", []string{`"per_record"`, `"seller_keeps"`, `"current_bps": 0`}},
		{"/discover", []string{`"start_here"`, `"X-Service-Key"`, `"POST /settlements"`}},
		{"/openapi.json", []string{`"openapi": "3.1.0"`}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			r := f.do("GET", tc.path, "", nil)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := r.header.Get("Cache-Control"); cc != "public, max-age=300" {
				t.Errorf("Cache-Control %q", cc)
			}
			for _, want := range tc.contains {
				if !strings.Contains(string(r.body), want) {
					t.Errorf("body lacks %s", want)
				}
			}
			etag := r.header.Get("ETag")
			if !strings.HasPrefix(etag, `"sha256-`) {
				t.Fatalf("ETag %q", etag)
			}
			if again := f.do("GET", tc.path, "", nil); string(again.body) != string(r.body) {
				t.Errorf("the document changed between two requests")
			}
			if nm := f.do("GET", tc.path, "", nil, "If-None-Match", etag); nm.status != 304 || len(nm.body) != 0 {
				t.Errorf("If-None-Match: %d, %d bytes", nm.status, len(nm.body))
			}
			if keyed := f.do("GET", tc.path, "sk_not_a_key", nil); keyed.status != 200 {
				t.Errorf("a public document refused a (wrong) key: %d", keyed.status)
			}
			if post := f.do("POST", tc.path, "", []byte(`{}`)); post.status != 405 {
				t.Errorf("POST %s: %d, want 405", tc.path, post.status)
			}
		})
	}
}

// TestCapabilitiesCheckEndpoint: POST /v1/capabilities/check over HTTP.
func TestCapabilitiesCheckEndpoint(t *testing.T) {
	f := newDocFixture(t, false, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	body := func(o map[string]any) []byte {
		m := map[string]any{"seller_country": "IE", "buyer_country": "DE", "supply_type": "digital_service", "buyer_type": "B2C",
			"payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}}
		for k, v := range o {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return mustJSON(t, m)
	}
	type aspects struct{ event, payment, jurisdiction, determination, receipt string }
	cases := []struct {
		name    string
		key     string
		body    []byte
		headers []string
		status  int
		code    string
		field   string
		want    aspects
		settle  string // status of the POST /settlements route in event_support.ingest
	}{
		{name: "anonymous OSS corridor", body: body(nil), status: 200, want: aspects{"supported", "supported", "supported", "determined", "eligible"}, settle: "conditional"},
		{name: "the account's own corridor", key: keyA, body: body(nil), status: 200, want: aspects{"supported", "supported", "supported", "determined", "eligible"}, settle: "usable"},
		{name: "another seller country with a key", key: keyB, body: body(nil), status: 200, want: aspects{"supported", "supported", "supported", "determined", "eligible"}, settle: "not_usable"},
		{name: "UK consumer", body: body(map[string]any{"seller_country": "US", "buyer_country": "GB"}), status: 200, want: aspects{"supported", "supported", "experimental", "determined", "experimental"}, settle: "conditional"},
		{name: "planned protocol", body: body(map[string]any{"payment": map[string]any{"protocol": "ap2"}}), status: 200, want: aspects{"supported", "planned", "supported", "determined", "ineligible"}, settle: "conditional"},
		{name: "unsupported network", body: body(map[string]any{"payment": map[string]any{"protocol": "x402", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}}), status: 200, want: aspects{"supported", "unsupported", "supported", "determined", "ineligible"}, settle: "conditional"},
		{name: "wrong key", key: "sk_wrong", body: body(nil), status: 401, code: "AUTHENTICATION_FAILED"},
		{name: "empty key header", key: "", body: body(nil), headers: []string{"X-Service-Key", " "}, status: 401, code: "AUTHENTICATION_FAILED"},
		{name: "missing buyer country", body: body(map[string]any{"buyer_country": nil}), status: 400, code: "BAD_REQUEST", field: "/buyer_country"},
		{name: "camelCase member", body: body(map[string]any{"sellerCountry": "IE"}), status: 400, code: "BAD_REQUEST", field: "/sellerCountry"},
		{name: "unknown payment member", body: body(map[string]any{"payment": map[string]any{"protocol": "x402", "chain": "base"}}), status: 400, code: "BAD_REQUEST", field: "/payment/chain"},
		{name: "not JSON", body: []byte("seller_country=IE"), status: 400, code: "BAD_REQUEST"},
		{name: "text/plain", body: body(nil), headers: []string{"Content-Type", "text/plain"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "too large", body: body(map[string]any{"supply_type": strings.Repeat("a", 70<<10)}), status: 413, code: "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do("POST", "/v1/capabilities/check", tc.key, tc.body, tc.headers...)
			if tc.code != "" {
				assertProblem(t, r, tc.status, tc.code, tc.field)
				return
			}
			if r.status != tc.status {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if cc := r.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			var c catalog.CapabilityCheck
			if err := json.Unmarshal(r.body, &c); err != nil {
				t.Fatal(err)
			}
			got := aspects{c.EventSupport.Status, c.PaymentSupport.Status, c.JurisdictionRepresentation.Status, c.DeterminationCoverage.Status, c.ReceiptEligibility.Status}
			if got != tc.want {
				t.Errorf("aspects %+v, want %+v", got, tc.want)
			}
			if c.EventSupport.Ingest[0].Endpoint != "POST /settlements" || c.EventSupport.Ingest[0].Status != tc.settle {
				t.Errorf("settlements route %+v, want %s", c.EventSupport.Ingest[0], tc.settle)
			}
			var top map[string]any
			if err := json.Unmarshal(r.body, &top); err != nil {
				t.Fatal(err)
			}
			for _, flag := range []string{"supported", "status", "ok"} {
				if _, ok := top[flag]; ok {
					t.Errorf("the answer has a top-level %q", flag)
				}
			}
		})
	}
}

// TestDiscoverNegotiation: /discover answers HTML to browsers, JSON to
// agents and curl.
func TestDiscoverNegotiation(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	browser := f.do("GET", "/discover", "", nil, "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if ct := browser.header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.Contains(string(browser.body), "<h1>fiscal402</h1>") || !strings.Contains(string(browser.body), publicURL+"/openapi.json") {
		t.Errorf("browser: %s\n%s", ct, browser.body)
	}
	if v := browser.header.Get("Vary"); v != "Accept" {
		t.Errorf("Vary %q", v)
	}
	for accept, html := range map[string]bool{
		"":                                    false,
		"*/*":                                 false,
		"application/json":                    false,
		"text/html":                           true,
		"text/html;q=0.5, application/json":   false,
		"application/json;q=0.2, text/html":   true,
		"text/*":                              true,
		"text/html;q=0, */*":                  false,
		"text/html;q=0.9, */*;q=0.8":          true,
		"garbage;;;, text/html":               true,
		"application/xhtml+xml, text/plain":   false,
		"application/json, text/html;q=1.000": false,
	} {
		if got := httpserver.PrefersHTML(accept); got != html {
			t.Errorf("PrefersHTML(%q) = %v", accept, got)
		}
	}
}

// TestAgentCard checks the A2A v1.0 required members and that the card
// does not pretend to be an A2A task endpoint.
func TestAgentCard(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	var card map[string]any
	if err := json.Unmarshal(f.do("GET", "/.well-known/agent-card.json", "", nil).body, &card); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := card[k]; !ok {
			t.Errorf("A2A required member %s missing", k)
		}
	}
	iface := card["supportedInterfaces"].([]any)[0].(map[string]any)
	if b := iface["protocolBinding"]; b == "JSONRPC" || b == "GRPC" || b == "HTTP+JSON" {
		t.Errorf("the card claims the A2A binding %v, which the service does not implement", b)
	}
	if !strings.HasPrefix(iface["url"].(string), "https://") {
		t.Errorf("interface url %v", iface["url"])
	}
	ext := card["capabilities"].(map[string]any)["extensions"].([]any)[0].(map[string]any)
	if ext["required"] != true || ext["uri"] != publicURL+"/openapi.json" {
		t.Errorf("extension %v", ext)
	}
	for _, s := range card["skills"].([]any) {
		s := s.(map[string]any)
		for _, k := range []string{"id", "name", "description", "tags"} {
			if s[k] == nil || s[k] == "" {
				t.Errorf("skill %v lacks %s", s["id"], k)
			}
		}
		if s["id"] == "vies_lookup" {
			t.Errorf("without a registry the card offers vies_lookup")
		}
	}
}

// FuzzPrefersHTML: the Accept negotiation never panics, and never prefers
// HTML unless text/html or text/* is named.
func FuzzPrefersHTML(f *testing.F) {
	for _, s := range []string{"", "*/*", "text/html", "text/html;q=0.5, application/json", "text/*;q=abc", ";;;,,", "text/html;q=1e400", "application/json;q=-1, text/html;q=0.001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		if httpserver.PrefersHTML(accept) && !strings.Contains(strings.ToLower(accept), "text/") {
			t.Fatalf("HTML preferred for %q", accept)
		}
	})
}

// TestDocumentsFollowHost: without a public URL each document links the
// host it was asked on, and a flood of Host headers cannot grow the
// document cache without bound.
func TestDocumentsFollowHost(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.engine, httpserver.Options{})
	for i := range 200 {
		host := fmt.Sprintf("h%d.example:8402", i)
		req := httptest.NewRequest("GET", "/.well-known/service.json", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var m struct {
			OpenAPI string `json:"openapi"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.OpenAPI != "http://"+host+"/openapi.json" {
			t.Fatalf("host %s: openapi link %s", host, m.OpenAPI)
		}
	}
	if n := httpserver.DocumentCacheLen(h); n > 64 {
		t.Errorf("document cache holds %d entries", n)
	}

	// The reliability document states the body limit this server enforces.
	small := newHandler(t, f.engine, httpserver.Options{MaxBodyBytes: 1024})
	rec := httptest.NewRecorder()
	small.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/reliability", nil))
	if !strings.Contains(rec.Body.String(), `"max_request_bytes": 1024,`) {
		t.Errorf("reliability limits do not follow Options.MaxBodyBytes:\n%s", rec.Body)
	}
}

// TestSellerValueReceiptIsTheIssuedOne: the seller-value document
// describes the receipt a record gets, whose version is the jurisdiction
// table's default (4.0.0: no JWS, signed through the log checkpoint the
// receipt key cosigns, verified with the JWKS and the log key); it must
// not promise a JWS that the receipt does not have.
func TestSellerValueReceiptIsTheIssuedOne(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	var doc httpserver.SellerValue
	if err := json.Unmarshal(f.do("GET", "/v1/seller-value", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	j := catalog.Jurisdictions()[0]
	v := catalog.ReceiptVersions()[j.DefaultReceiptVersion]
	i := slices.IndexFunc(doc.PerRecord, func(d httpserver.Deliverable) bool { return d.Item == "signed receipt" })
	if i < 0 {
		t.Fatal("no signed receipt in per_record")
	}
	detail := doc.PerRecord[i].Detail
	if v.JWSAlg == "" && strings.Contains(detail, "JWS") {
		t.Errorf("receipt %s has no JWS, the seller-value document says: %s", v.Spec, detail)
	}
	if !strings.Contains(detail, v.Spec) || !strings.Contains(detail, "/.well-known/log-key") {
		t.Errorf("receipt detail %q names neither %s nor the log key its verification needs", detail, v.Spec)
	}
}

package httpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/vies"
)

const publicURL = "https://fiscal402.example"

// docFixture is a fixture whose server has a public URL (so documents are
// byte-stable) and, optionally, a VAT-number registry.
type docFixture struct {
	*fixture
	handler *httpserver.Server
}

func newDocFixture(t testing.TB, withVIES bool, now time.Time) *docFixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := fiscal.Config{Dir: f.dir, Accounts: testAccounts(t), Clock: func() time.Time { return now }, Rand: &detRand{seed: "fixture"}, Logger: quiet}
	if withVIES {
		cfg.VIES = vies.NewFake()
	}
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, e, httpserver.Options{Logger: quiet, PublicURL: publicURL})
	f.engine, f.srv = e, httptest.NewServer(h)
	t.Cleanup(f.close)
	return &docFixture{fixture: f, handler: h}
}

func (f *docFixture) openAPI(t *testing.T) openAPIDoc {
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

// TestOpenAPICoversRoutes: the routes the server mounts and the operations
// of the document are exactly the same set.
func TestOpenAPICoversRoutes(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	documented := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	mounted := map[string]bool{}
	for _, k := range httpserver.RouteKeys(f.handler) {
		mounted[k] = true
		if !documented[k] {
			t.Errorf("route %q is mounted but has no OpenAPI operation: add an entry %q to operations() in httpserver/openapi.go", k, k)
		}
	}
	for k := range documented {
		if !mounted[k] {
			t.Errorf("the OpenAPI document describes %q, which the server does not mount", k)
		}
	}
	for _, k := range httpserver.OperationKeys() {
		if !mounted[k] {
			t.Errorf("operations() has an entry %q for a route the server does not mount: remove it or mount the route", k)
		}
	}
}

// TestOpenAPIDocument checks the document's promises: version, security per
// route, the idempotency header, problem responses, and that every error
// code is described.
func TestOpenAPIDocument(t *testing.T) {
	f := newDocFixture(t, false, testNow)
	doc := f.openAPI(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", doc["openapi"])
	}
	info := doc["info"].(map[string]any)
	if info["version"] != "0.3.0" {
		t.Errorf("info.version = %v", info["version"])
	}
	desc := info["description"].(string)
	for _, want := range []string{"Decisions the service has taken", "the key identifies the seller", "UNSUPPORTED_NETWORK", "problem+json", fmt.Sprint(fiscal.MaxRequestBytes), "Idempotency-Key", "settlement.processed"} {
		if !strings.Contains(desc, want) {
			t.Errorf("info.description lacks %q", want)
		}
	}
	if servers := doc["servers"].([]any); servers[0].(map[string]any)["url"] != publicURL {
		t.Errorf("servers = %v", servers)
	}
	scheme := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)["ServiceKey"].(map[string]any)
	if scheme["type"] != "apiKey" || scheme["in"] != "header" || scheme["name"] != "X-Service-Key" {
		t.Errorf("security scheme %v", scheme)
	}
	auth := httpserver.RouteAuth(f.handler)
	for key, required := range auth {
		method, path, _ := strings.Cut(key, " ")
		op := doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
		sec, _ := json.Marshal(op["security"])
		switch {
		case required && string(sec) != `[{"ServiceKey":[]}]`:
			t.Errorf("%s requires the key but its security is %s", key, sec)
		case !required && strings.Contains(string(sec), "ServiceKey") && string(sec) != `[{},{"ServiceKey":[]}]`:
			t.Errorf("%s does not require the key but its security is %s", key, sec)
		}
		responses := op["responses"].(map[string]any)
		if _, ok := responses["500"]; !ok {
			t.Errorf("%s documents no 500", key)
		}
		if required {
			if _, ok := responses["401"]; !ok {
				t.Errorf("%s requires the key but documents no 401", key)
			}
		}
		if op["requestBody"] != nil {
			for _, st := range []string{"400", "413", "415"} {
				if _, ok := responses[st]; !ok {
					t.Errorf("%s takes a body but documents no %s", key, st)
				}
			}
		}
		if op["operationId"] == "" || op["summary"] == "" {
			t.Errorf("%s has no operationId or summary", key)
		}
	}
	post := doc["paths"].(map[string]any)["/settlements"].(map[string]any)["post"].(map[string]any)
	params, _ := json.Marshal(post["parameters"])
	if !strings.Contains(string(params), "#/components/parameters/IdempotencyKey") {
		t.Errorf("POST /settlements lacks the Idempotency-Key parameter: %s", params)
	}
	idem := doc["components"].(map[string]any)["parameters"].(map[string]any)["IdempotencyKey"].(map[string]any)
	if idem["name"] != "Idempotency-Key" || idem["in"] != "header" || idem["required"] != false {
		t.Errorf("IdempotencyKey parameter %v", idem)
	}
	conflict := post["responses"].(map[string]any)["409"].(map[string]any)
	if d := conflict["description"].(string); !strings.Contains(d, "IDEMPOTENCY_CONFLICT") || !strings.Contains(d, "SETTLEMENT_CONFLICT") {
		t.Errorf("409 description %q", d)
	}
	if _, ok := conflict["content"].(map[string]any)["application/problem+json"]; !ok {
		t.Errorf("409 is not a problem document")
	}
	problem := doc.resolve("#/components/schemas/problemDoc")
	for _, m := range []string{"code", "request_id", "field", "status", "title", "type", "detail"} {
		if _, ok := problem["properties"].(map[string]any)[m]; !ok {
			t.Errorf("problem schema lacks %s", m)
		}
	}
	for _, name := range []string{"SettlementRequest", "CapabilityCheckRequest", "CheckPayment"} {
		if s := doc.resolve("#/components/schemas/" + name); s["additionalProperties"] != false {
			t.Errorf("%s accepts unknown members in the document, but the decoder rejects them", name)
		}
	}
	req := doc.resolve("#/components/schemas/SettlementRequest")
	if got := asStrings(req["required"]); !slices.Equal(got, []string{"amountUsdc", "txHash", "timestamp", "payerWallet", "receiverWallet", "network"}) {
		t.Errorf("SettlementRequest required = %v (want the six settlement fields)", got)
	}
}

// TestOpenAPICodeDocs: every error code the engine can return has a
// sentence in the document (a new code needs a line in codeDocs).
func TestOpenAPICodeDocs(t *testing.T) {
	for _, c := range fiscal.Codes() {
		if httpserver.CodeDoc(c) == "" {
			t.Errorf("code %s has no entry in codeDocs (httpserver/openapi_docs.go)", c)
		}
	}
}

// TestOpenAPIValidates runs a real OpenAPI 3.1 validator, Redocly CLI
// (pinned in .ci/package.json), with every rule of its strict recommended
// set except the two testdata/redocly.yaml turns off and explains.
func TestOpenAPIValidates(t *testing.T) {
	redocly := testtool.File(t, "redocly (npm ci --prefix .ci)", filepath.Join("..", ".ci", "node_modules", ".bin", "redocly"))
	node := testtool.LookPath(t, "node")
	if v, err := exec.Command(node, "--version").Output(); err != nil || !nodeAtLeast(strings.TrimSpace(string(v)), 20, 19) {
		testtool.Missing(t, "node >= 20.19", fmt.Sprintf("@redocly/cli 2 needs it; found %q", strings.TrimSpace(string(v))))
	}
	f := newDocFixture(t, false, testNow)
	r := f.do("GET", "/openapi.json", "", nil)
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(redocly, "lint", "--config", filepath.Join("testdata", "redocly.yaml"), "--format", "stylish", path)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
}

// TestResponsesMatchDocument sends real requests to every JSON endpoint
// and checks each answer against the schema the document gives it: no
// undocumented member, every required one present, types and enums right.
func TestResponsesMatchDocument(t *testing.T) {
	f := newDocFixture(t, true, testNow)
	doc := f.openAPI(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	id := created.json(t)["id"].(string)
	pending := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(7), "consumerCountry": nil})))
	b2b := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(8), "consumerVatNumber": "DE136695976"})))
	check := mustJSON(t, map[string]any{"seller_country": "IE", "buyer_country": "DE", "supply_type": "digital_service", "buyer_type": "B2C",
		"payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}})
	cases := []struct {
		method, path, docPath, key string
		body                       []byte
		status                     int
	}{
		{"POST", "/settlements", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(9)})), 201},
		{"POST", "/settlements", "/settlements", keyA, mustJSON(t, settlement(nil)), 200},
		{"POST", "/settlements", "/settlements", keyA, []byte(`{"amountUsdc":1}`), 400},
		{"POST", "/settlements", "/settlements", "", mustJSON(t, settlement(nil)), 401},
		{"GET", "/settlements/" + id, "/settlements/{id}", keyA, nil, 200},
		{"GET", "/settlements/" + pending.json(t)["id"].(string), "/settlements/{id}", keyA, nil, 200},
		{"GET", "/settlements/" + b2b.json(t)["id"].(string), "/settlements/{id}", keyA, nil, 200},
		{"GET", "/settlements/" + id, "/settlements/{id}", keyB, nil, 404},
		{"GET", "/v1/receipts/rcpt_" + id, "/v1/receipts/{id}", "", nil, 200},
		{"GET", "/v1/receipts/rcpt_nope", "/v1/receipts/{id}", "", nil, 404},
		{"GET", "/.well-known/jwks.json", "/.well-known/jwks.json", "", nil, 200},
		{"GET", "/v1/log/proof/inclusion?index=0", "/v1/log/proof/inclusion", "", nil, 200},
		{"GET", "/v1/log/proof/inclusion", "/v1/log/proof/inclusion", "", nil, 400},
		{"GET", "/v1/log/proof/consistency?from=1", "/v1/log/proof/consistency", "", nil, 200},
		{"GET", "/v1/capabilities", "/v1/capabilities", "", nil, 200},
		{"POST", "/v1/capabilities/check", "/v1/capabilities/check", "", check, 200},
		{"POST", "/v1/capabilities/check", "/v1/capabilities/check", keyA, check, 200},
		{"POST", "/v1/capabilities/check", "/v1/capabilities/check", "sk_wrong", check, 401},
		{"POST", "/v1/capabilities/check", "/v1/capabilities/check", "", []byte(`{"seller_country":"IE"}`), 400},
		{"GET", "/v1/pricing", "/v1/pricing", "", nil, 200},
		{"GET", "/.well-known/service.json", "/.well-known/service.json", "", nil, 200},
		{"GET", "/.well-known/agent-card.json", "/.well-known/agent-card.json", "", nil, 200},
		{"GET", "/v1/reliability", "/v1/reliability", "", nil, 200},
		{"GET", "/v1/discovery", "/v1/discovery", "", nil, 200},
		{"GET", "/v1/preference", "/v1/preference", "", nil, 200},
		{"GET", "/v1/seller-value", "/v1/seller-value", "", nil, 200},
		{"GET", "/discover", "/discover", "", nil, 200},
		{"GET", "/settlements?limit=2", "/settlements", keyA, nil, 200},
		{"POST", "/v1/fiscal-events", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(40)})), 201},
		{"POST", "/v1/fiscal-events", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(41), "seller": map[string]any{"legalName": "Vendeur SARL", "country": "FR"}})), 201},
		{"GET", "/v1/fiscal-events", "/v1/fiscal-events", keyA, nil, 200},
		{"GET", "/v1/events?limit=20", "/v1/events", keyA, nil, 200},
		{"POST", "/sandbox/v1/simulate", "/sandbox/v1/simulate", "", mustJSON(t, settlement(map[string]any{"txHash": txHash(42)})), 201},
		{"POST", "/v1/compliance/evaluate", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(nil)), 200},
		{"GET", "/v1/fx/status", "/v1/fx/status", "", nil, 200},
		{"GET", "/v1/x402/settlements/nope", "/v1/x402/settlements/{id}", keyA, nil, 404},
		{"GET", "/v1/webhook-endpoints", "/v1/webhook-endpoints", keyA, nil, 200},
		{"GET", "/v1/log/proof/consistency?from=1&to=2", "/v1/log/proof/consistency", "", nil, 200},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := f.do(tc.method, tc.path, tc.key, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			assertDocumented(t, doc, tc.method, tc.docPath, r)
		})
	}
	// The receipt's claims, typed in the document, match too.
	for _, r := range []response{created, pending, b2b} {
		assertDocumented(t, doc, "POST", "/settlements", r)
	}
}

// nodeAtLeast reports whether a "vMAJOR.MINOR.PATCH" version is at least
// major.minor.
func nodeAtLeast(v string, major, minor int) bool {
	var a, b, c int
	if _, err := fmt.Sscanf(v, "v%d.%d.%d", &a, &b, &c); err != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

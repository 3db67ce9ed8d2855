package httpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestQuotaExceededHeadersInOpenAPI: a 429 QUOTA_EXCEEDED of evaluate and
// simulate answers X-Quota-Limit, X-Quota-Remaining and X-Quota-Reset
// beside Retry-After (README "Limits, quota and authentication": the reset
// time is how a client learns when to come back). The OpenAPI document's
// 429 of both operations must declare every such header the real answer
// carries, as their 200/201 do.
func TestQuotaExceededHeadersInOpenAPI(t *testing.T) {
	f := newFixture(t)
	var last response
	for i := 0; i < 11; i++ {
		last = f.do("POST", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(nil)))
	}
	assertProblem(t, last, 429, "QUOTA_EXCEEDED", "")
	var sent []string
	for name := range last.header {
		if strings.HasPrefix(name, "X-Quota-") || name == "Retry-After" {
			sent = append(sent, name)
		}
	}
	if len(sent) < 2 {
		t.Fatalf("the 429 sent no quota headers: %v", last.header)
	}
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Responses map[string]map[string]any `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct{ method, path string }{{"post", "/v1/compliance/evaluate"}, {"post", "/sandbox/v1/simulate"}} {
		responses, _ := doc.Paths[op.path][op.method]["responses"].(map[string]any)
		r, _ := responses["429"].(map[string]any)
		if ref, ok := r["$ref"].(string); ok {
			r = doc.Components.Responses[strings.TrimPrefix(ref, "#/components/responses/")]
		}
		declared, _ := r["headers"].(map[string]any)
		for _, h := range sent {
			if _, ok := declared[h]; !ok {
				t.Errorf("%s %s 429: the answer sends %s, the document declares only %v", strings.ToUpper(op.method), op.path, h, keys(declared))
			}
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

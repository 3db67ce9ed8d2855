package httpserver_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/httpserver"
)

// TestReliabilityPublishesTheRateLimits: GET /v1/reliability states the
// limits the deployment enforces (README "The service describes itself":
// "enforced limits"). The per-account rate limit and the failed-
// authentication limit are set per deployment (-rate-limit, -rate-burst,
// -auth-fail-*), so a client pacing itself needs the numbers this server
// applies, and they must be the ones it enforces: the published burst of
// requests passes, the next one is 429.
func TestReliabilityPublishesTheRateLimits(t *testing.T) {
	f := newCustomFixture(t, customSettings{server: httpserver.Options{
		RateLimit: rate.Limit(0.001), RateBurst: 4,
		AuthFailureRate: rate.Limit(0.5), AuthFailureBurst: 7,
	}})
	var doc struct {
		Limits struct {
			RateLimit *struct {
				Per       string  `json:"per"`
				PerSecond float64 `json:"per_second"`
				Burst     int     `json:"burst"`
			} `json:"rate_limit"`
			AuthFailures *struct {
				Per             string  `json:"per"`
				PerSecond       float64 `json:"per_second"`
				Burst           int     `json:"burst"`
				MaxBlockSeconds int     `json:"max_block_seconds"`
			} `json:"auth_failures"`
		} `json:"limits"`
	}
	r := f.do("GET", "/v1/reliability", "", nil)
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	rl, af := doc.Limits.RateLimit, doc.Limits.AuthFailures
	if rl == nil || af == nil {
		t.Fatalf("limits publish no rate_limit or auth_failures: %s", r.body)
	}
	if rl.PerSecond != 0.001 || af.PerSecond != 0.5 || af.Burst != 7 || af.MaxBlockSeconds != int(httpserver.DefaultAuthFailureMaxBackoff.Seconds()) {
		t.Errorf("published rate_limit %+v, auth_failures %+v; the server applies 0.001/s burst 4, failures 0.5/s burst 7", *rl, *af)
	}
	for i := 0; i < rl.Burst; i++ {
		if r := f.do("GET", "/settlements", keyA, nil); r.status != 200 {
			t.Fatalf("request %d within the published burst %d: %d %s", i+1, rl.Burst, r.status, r.body)
		}
	}
	over := f.do("GET", "/settlements", keyA, nil)
	assertProblem(t, over, 429, "RATE_LIMITED", "")
	if _, err := strconv.Atoi(over.header.Get("Retry-After")); err != nil {
		t.Errorf("Retry-After %q", over.header.Get("Retry-After"))
	}
}

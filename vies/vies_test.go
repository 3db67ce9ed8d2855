package vies

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// viesFaultCodes are the fault codes VIES documents (WSDL documentation and
// npm vies README: https://ec.europa.eu/taxation_customs/vies/checkVatService.wsdl,
// https://www.npmjs.com/package/vies).
var viesFaultCodes = []string{
	"SERVICE_UNAVAILABLE", "MS_UNAVAILABLE", "TIMEOUT", "SERVER_BUSY",
	"GLOBAL_MAX_CONCURRENT_REQ", "GLOBAL_MAX_CONCURRENT_REQ_TIME",
	"MS_MAX_CONCURRENT_REQ", "MS_MAX_CONCURRENT_REQ_TIME",
	"INVALID_REQUESTER_INFO", "VAT_BLOCKED", "IP_BLOCKED",
}

func TestDECheckDigitHelper(t *testing.T) {
	// Vectors from python-stdnum's tests/test_eu_vat.doctest
	// (https://github.com/arthurdejong/python-stdnum).
	for _, n := range []string{"136695976", "812847601"} {
		if !deCheck(n) {
			t.Errorf("deCheck(%s) = false", n)
		}
	}
	if deCheck("136695978") {
		t.Error("deCheck(136695978) = true")
	}
}

func TestVIESValidWithRequestIdentifier(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	c := NewVIES(VIESConfig{BaseURL: srv.URL + "/", RequesterCountry: "at", RequesterNumber: "ATU 135 856 27"})
	r := c.Check(context.Background(), "DE", "136695976")

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := viesRequest{CountryCode: "DE", VATNumber: "136695976", RequesterMemberStateCode: "AT", RequesterNumber: "U13585627"}
	if reqs[0] != want {
		t.Errorf("request = %+v, want %+v", reqs[0], want)
	}
	if r.Status != StatusValid || r.Registry != RegistryVIES || r.CountryCode != "DE" || r.Number != "136695976" {
		t.Fatalf("result = %+v", r)
	}
	if r.RequestIdentifier != "WAPIAAAAZ136695976" {
		t.Errorf("RequestIdentifier = %q", r.RequestIdentifier)
	}
	if r.Name != "Example GmbH" || r.Address != "Musterstr. 1\n10115 Berlin" {
		t.Errorf("name/address = %q / %q", r.Name, r.Address)
	}
	wantDate := time.Date(2026, 9, 14, 8, 15, 30, 123e6, time.UTC)
	if !r.RequestDate.Equal(wantDate) {
		t.Errorf("RequestDate = %v, want %v", r.RequestDate, wantDate)
	}
	if _, off := r.RequestDate.Zone(); off != 2*3600 {
		t.Errorf("RequestDate offset = %d, want the registry's +02:00 kept", off)
	}
	if r.Fault != "" || r.Detail != "" || r.Attempts != 1 || r.Cached {
		t.Errorf("fault/detail/attempts/cached = %q %q %d %t", r.Fault, r.Detail, r.Attempts, r.Cached)
	}
}

func TestVIESWithoutRequesterSendsNoRequesterFields(t *testing.T) {
	var raw string
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		raw = fmt.Sprintf("%+v", req)
		return 200, viesValid(req)
	})
	r := NewVIES(VIESConfig{BaseURL: srv.URL}).Check(context.Background(), "gr", "094259216")
	if r.Status != StatusValid || r.CountryCode != "EL" || r.RequestIdentifier != "" || r.Detail != "" {
		t.Fatalf("result = %+v", r)
	}
	if raw != "{CountryCode:EL VATNumber:094259216 RequesterMemberStateCode: RequesterNumber:}" {
		t.Errorf("request = %s", raw)
	}
}

func TestVIESRequesterSentButNoIdentifier(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		req.RequesterNumber = ""
		return 200, viesValid(req)
	})
	c := NewVIES(VIESConfig{BaseURL: srv.URL, RequesterCountry: "AT", RequesterNumber: "U13585627"})
	r := c.Check(context.Background(), "DE", "136695976")
	if r.Status != StatusValid || !strings.Contains(r.Detail, "no requestIdentifier") {
		t.Fatalf("result = %+v", r)
	}
}

func TestVIESHalfConfiguredRequesterMakesNoCall(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	for _, c := range []VIESConfig{
		{BaseURL: srv.URL, RequesterCountry: "AT"},
		{BaseURL: srv.URL, RequesterNumber: "U13585627"},
	} {
		r := NewVIES(c).Check(context.Background(), "DE", "136695976")
		if r.Status != StatusUnavailable || r.Fault != FaultRequesterInfo {
			t.Errorf("%+v: result = %+v", c, r)
		}
	}
	if srv.calls() != 0 {
		t.Errorf("%d calls, want 0", srv.calls())
	}
}

// TestVIESReplies drives the client through every kind of reply the
// registry sends, each from an httptest server.
func TestVIESReplies(t *testing.T) {
	echo := func(extra string) func(req viesRequest) (int, string) {
		return func(req viesRequest) (int, string) {
			return 200, fmt.Sprintf(`{"countryCode":%q,"vatNumber":%q,"requestDate":"2026-09-14T10:15:30Z"%s}`, req.CountryCode, req.VATNumber, extra)
		}
	}
	fixed := func(status int, body string) func(viesRequest) (int, string) {
		return func(viesRequest) (int, string) { return status, body }
	}
	tests := []struct {
		name   string
		answer viesReplyFunc
		status Status
		fault  string
		name2  string // expected Name when valid
	}{
		{"valid", func(r viesRequest) (int, string) { return 200, viesValid(r) }, StatusValid, "", "Example GmbH"},
		{"valid undisclosed name kept verbatim", echo(`,"valid":true,"name":"---","address":"---"`), StatusValid, "", "---"},
		{"valid with userError VALID", echo(`,"valid":true,"userError":"VALID","name":"X"`), StatusValid, "", "X"},
		{"valid GET shape isValid", echo(`,"isValid":true,"name":"X"`), StatusValid, "", "X"},
		{"valid echo with prefix", fixed(200, `{"countryCode":"DE","vatNumber":"DE 136 695 976","valid":true}`), StatusValid, "", ""},
		{"valid bare date", fixed(200, `{"requestDate":"2026-09-14","valid":true}`), StatusValid, "", ""},
		{"valid date with offset", fixed(200, `{"requestDate":"2026-09-14+02:00","valid":true}`), StatusValid, "", ""},

		{"invalid", func(r viesRequest) (int, string) { return 200, viesInvalid(r) }, StatusInvalid, FaultInvalid, ""},
		{"invalid userError INVALID", echo(`,"valid":false,"userError":"INVALID"`), StatusInvalid, FaultInvalid, ""},
		{"invalid GET shape", echo(`,"isValid":false,"userError":"INVALID","name":"---"`), StatusInvalid, FaultInvalid, ""},
		{"INVALID_INPUT as 400", fixed(400, viesFault("INVALID_INPUT")), StatusInvalid, FaultInvalidInput, ""},
		{"INVALID_INPUT as 200 userError", echo(`,"valid":false,"userError":"INVALID_INPUT"`), StatusInvalid, FaultInvalidInput, ""},
		{"INVALID_INPUT twice", fixed(400, `{"actionSucceed":false,"errorWrappers":[{"error":"INVALID_INPUT"},{"error":"INVALID_INPUT"}]}`), StatusInvalid, FaultInvalidInput, ""},

		{"fault beside INVALID_INPUT wins", fixed(400, `{"actionSucceed":false,"errorWrappers":[{"error":"INVALID_INPUT"},{"error":"MS_UNAVAILABLE"}]}`), StatusUnavailable, "MS_UNAVAILABLE", ""},
		{"500 CommonResponse", fixed(500, viesFault("MS_UNAVAILABLE")), StatusUnavailable, "MS_UNAVAILABLE", ""},
		{"400 unknown code", fixed(400, viesFault("SOMETHING_NEW")), StatusUnavailable, "SOMETHING_NEW", ""},
		{"lower-case code normalised", fixed(200, `{"actionSucceed":false,"errorWrappers":[{"error":"ms_unavailable"}]}`), StatusUnavailable, "MS_UNAVAILABLE", ""},
		{"500 plain text", fixed(500, "Internal Server Error"), StatusUnavailable, "HTTP_500", ""},
		{"503 html", fixed(503, "<html><body>Service Unavailable</body></html>"), StatusUnavailable, "HTTP_503", ""},
		{"503 empty", fixed(503, ""), StatusUnavailable, "HTTP_503", ""},
		{"429", fixed(429, ""), StatusUnavailable, "HTTP_429", ""},
		{"404 wrong base url", fixed(404, `{"error":"not found"}`), StatusUnavailable, "HTTP_404", ""},
		{"500 with valid:true is no answer", fixed(500, `{"valid":true}`), StatusUnavailable, "HTTP_500", ""},
		{"actionSucceed false without code", fixed(200, `{"actionSucceed":false}`), StatusUnavailable, FaultMalformed, ""},
		{"actionSucceed false without code on 500", fixed(500, `{"actionSucceed":false,"errorWrappers":[]}`), StatusUnavailable, "HTTP_500", ""},
		{"error code with junk", fixed(200, `{"actionSucceed":false,"errorWrappers":[{"error":"<b>oops</b>"}]}`), StatusUnavailable, FaultMalformed, ""},

		{"malformed json", fixed(200, `{"valid":tru`), StatusUnavailable, FaultMalformed, ""},
		{"empty body", fixed(200, ``), StatusUnavailable, FaultMalformed, ""},
		{"json null", fixed(200, `null`), StatusUnavailable, FaultMalformed, ""},
		{"json array", fixed(200, `[{"valid":true}]`), StatusUnavailable, FaultMalformed, ""},
		{"empty object", fixed(200, `{}`), StatusUnavailable, FaultMalformed, ""},
		{"valid as string", fixed(200, `{"valid":"true"}`), StatusUnavailable, FaultMalformed, ""},
		{"valid null", fixed(200, `{"valid":null}`), StatusUnavailable, FaultMalformed, ""},
		{"valid contradicts userError", echo(`,"valid":true,"userError":"INVALID"`), StatusUnavailable, FaultMalformed, ""},
		{"invalid contradicts userError", echo(`,"valid":false,"userError":"VALID"`), StatusUnavailable, FaultMalformed, ""},
		{"valid and isValid disagree", echo(`,"valid":true,"isValid":false`), StatusUnavailable, FaultMalformed, ""},
		{"reply about another number", fixed(200, `{"countryCode":"DE","vatNumber":"812847601","valid":false}`), StatusUnavailable, FaultMalformed, ""},
		{"reply about another country", fixed(200, `{"countryCode":"AT","vatNumber":"136695976","valid":true}`), StatusUnavailable, FaultMalformed, ""},
		{"unreadable date", fixed(200, `{"requestDate":"14/09/2026","valid":true}`), StatusUnavailable, FaultMalformed, ""},
		{"unreadable userError", echo(`,"valid":false,"userError":"not a code"`), StatusUnavailable, FaultMalformed, ""},
		{"oversized reply", fixed(200, `{"valid":true,"name":"`+strings.Repeat("x", maxReplyBytes)+`"}`), StatusUnavailable, FaultMalformed, ""},
	}
	// Each documented fault, delivered as HTTP 200 in both shapes VIES uses.
	for _, code := range viesFaultCodes {
		tests = append(tests,
			struct {
				name   string
				answer viesReplyFunc
				status Status
				fault  string
				name2  string
			}{code + " as 200 CommonResponse", fixed(200, viesFault(code)), StatusUnavailable, code, ""},
			struct {
				name   string
				answer viesReplyFunc
				status Status
				fault  string
				name2  string
			}{code + " as 200 userError", echo(`,"valid":false,"isValid":false,"name":"---","userError":"` + code + `"`), StatusUnavailable, code, ""},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newVIESServer(t, tt.answer)
			r := NewVIES(VIESConfig{BaseURL: srv.URL}).Check(context.Background(), "DE", "136695976")
			if r.Status != tt.status || r.Fault != tt.fault {
				t.Fatalf("status/fault = %s/%q, want %s/%q (detail %q)", r.Status, r.Fault, tt.status, tt.fault, r.Detail)
			}
			if r.Registry != RegistryVIES || r.CountryCode != "DE" || r.Number != "136695976" || r.Attempts != 1 {
				t.Errorf("identity = %+v", r)
			}
			if r.RequestDate.IsZero() {
				t.Error("RequestDate is zero")
			}
			if tt.status == StatusValid && r.Name != tt.name2 {
				t.Errorf("Name = %q, want %q", r.Name, tt.name2)
			}
			if tt.status == StatusUnavailable && r.Detail == "" {
				t.Error("unavailable without a Detail")
			}
			if tt.status != StatusValid && (r.Name != "" || r.Address != "") {
				t.Errorf("name/address on %s: %q %q", r.Status, r.Name, r.Address)
			}
		})
	}
}

func TestVIESDates(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-09-14T10:15:30Z", time.Date(2026, 9, 14, 10, 15, 30, 0, time.UTC)},
		{"2026-09-14T10:15:30.5+02:00", time.Date(2026, 9, 14, 8, 15, 30, 5e8, time.UTC)},
		{"2026-09-14+02:00", time.Date(2026, 9, 13, 22, 0, 0, 0, time.UTC)},
		{"2026-09-14Z", time.Date(2026, 9, 14, 0, 0, 0, 0, time.UTC)},
		{" 2026-09-14 ", time.Date(2026, 9, 14, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := parseRegistryDate(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseRegistryDate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "2026-13-01", "14.09.2026", "2026-09-14T10:15:30", "yesterday"} {
		if _, err := parseRegistryDate(bad); err == nil {
			t.Errorf("parseRegistryDate(%q) succeeded", bad)
		}
	}
}

func TestVIESMissingDateUsesClock(t *testing.T) {
	at := time.Date(2026, 9, 14, 12, 0, 0, 0, time.UTC)
	srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, `{"valid":true}` })
	r := NewVIES(VIESConfig{BaseURL: srv.URL, Clock: func() time.Time { return at }}).Check(context.Background(), "DE", "136695976")
	if r.Status != StatusValid || !r.RequestDate.Equal(at) {
		t.Fatalf("result = %+v", r)
	}
}

func TestVIESSlowReplyTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		<-release
		return 200, viesValid(req)
	})
	start := time.Now()
	r := NewVIES(VIESConfig{BaseURL: srv.URL, Timeout: 50 * time.Millisecond}).Check(context.Background(), "DE", "136695976")
	if r.Status != StatusUnavailable || r.Fault != FaultTimeout {
		t.Fatalf("result = %+v", r)
	}
	if !strings.Contains(r.Detail, "no reply within 50ms") {
		t.Errorf("Detail = %q", r.Detail)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestVIESNetworkErrorAndCancel(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	url := srv.URL
	srv.Close()
	r := NewVIES(VIESConfig{BaseURL: url}).Check(context.Background(), "DE", "136695976")
	if r.Status != StatusUnavailable || r.Fault != FaultNetwork {
		t.Errorf("closed server: %+v", r)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = NewVIES(VIESConfig{BaseURL: url}).Check(ctx, "DE", "136695976")
	if r.Status != StatusUnavailable || r.Fault != FaultCanceled {
		t.Errorf("canceled: %+v", r)
	}
}

func TestVIESBadBaseURL(t *testing.T) {
	r := NewVIES(VIESConfig{BaseURL: "http://[::1"}).Check(context.Background(), "DE", "136695976")
	if r.Status != StatusUnavailable {
		t.Fatalf("result = %+v", r)
	}
}

func TestVIESDefaults(t *testing.T) {
	c := NewVIES(VIESConfig{})
	if c.url != DefaultVIESBaseURL+"/check-vat-number" || c.timeout != DefaultTimeout || c.client == nil || c.clock == nil {
		t.Errorf("defaults = %+v", c)
	}
	if c.client == http.DefaultClient {
		t.Error("shares http.DefaultClient")
	}
}

func TestStripPrefix(t *testing.T) {
	tests := []struct{ num, cc, want string }{
		{"DE136695976", "DE", "136695976"},
		{"136695976", "DE", "136695976"},
		{"GR094259216", "EL", "094259216"},
		{"EL094259216", "EL", "094259216"},
		{"FR40303265045", "FR", "40303265045"},
		{"FRK7399859412", "FR", "K7399859412"}, // 13 characters: prefix + body
		{"FR123456789", "FR", "FR123456789"},   // 11 characters: a body whose key is "FR"
	}
	for _, tt := range tests {
		if got := stripPrefix(tt.num, tt.cc); got != tt.want {
			t.Errorf("stripPrefix(%q, %q) = %q, want %q", tt.num, tt.cc, got, tt.want)
		}
	}
}

// TestVIESInvalidInputIn200IsCheckedLikeAnyAnswer: an INVALID_INPUT carried
// in a 200 body (userError) is a definitive "invalid" only when the rest of
// the body agrees: valid:true beside it, or an echo of another country or
// number, makes the reply no proof about the number asked (MALFORMED), as
// it does for a plain valid:false.
func TestVIESInvalidInputIn200IsCheckedLikeAnyAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"valid:true beside INVALID_INPUT":   `{"countryCode":"DE","vatNumber":"136695976","valid":true,"userError":"INVALID_INPUT"}`,
		"isValid:true beside INVALID_INPUT": `{"isValid":true,"userError":"INVALID_INPUT"}`,
		"about another country":             `{"countryCode":"AT","vatNumber":"136695976","valid":false,"userError":"INVALID_INPUT"}`,
		"about another number":              `{"countryCode":"DE","vatNumber":"812847601","valid":false,"userError":"INVALID_INPUT"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, body })
			r := NewVIES(VIESConfig{BaseURL: srv.URL}).Check(context.Background(), "DE", "136695976")
			if r.Status != StatusUnavailable || r.Fault != FaultMalformed {
				t.Fatalf("status/fault = %s/%q, want unavailable/%s (detail %q)", r.Status, r.Fault, FaultMalformed, r.Detail)
			}
		})
	}
	// The consistent forms stay invalid.
	for _, body := range []string{
		`{"countryCode":"DE","vatNumber":"136695976","valid":false,"userError":"INVALID_INPUT"}`,
		`{"userError":"INVALID_INPUT"}`,
	} {
		srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, body })
		r := NewVIES(VIESConfig{BaseURL: srv.URL}).Check(context.Background(), "DE", "136695976")
		if r.Status != StatusInvalid || r.Fault != FaultInvalidInput {
			t.Errorf("%s: status/fault = %s/%q, want invalid/%s", body, r.Status, r.Fault, FaultInvalidInput)
		}
	}
}

// TestVIESOversizedErrorPageKeepsItsStatus: a 503 (or 429) whose error
// page is larger than the reply bound is still the registry saying "busy"
// or "down", a transient fault to retry, not a MALFORMED_RESPONSE that is
// never retried. An oversized 200 stays malformed.
func TestVIESOversizedErrorPageKeepsItsStatus(t *testing.T) {
	page := "<html>" + strings.Repeat("x", maxReplyBytes) + "</html>"
	for status, want := range map[int]string{503: "HTTP_503", 429: "HTTP_429", 200: FaultMalformed} {
		srv := newVIESServer(t, func(viesRequest) (int, string) { return status, page })
		r := NewVIES(VIESConfig{BaseURL: srv.URL}).Check(context.Background(), "DE", "136695976")
		if r.Status != StatusUnavailable || r.Fault != want {
			t.Errorf("HTTP %d oversized: status/fault = %s/%q, want unavailable/%s", status, r.Status, r.Fault, want)
		}
		if want != FaultMalformed && !Transient(r.Fault) {
			t.Errorf("HTTP %d oversized: fault %q is not retried", status, r.Fault)
		}
	}
}

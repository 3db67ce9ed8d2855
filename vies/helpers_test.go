package vies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSyntax stands in for vat.ValidateNumber: prefix of two letters, body
// of 2–12 characters, and the real DE check digit (ISO 7064 MOD 11,10, as
// python-stdnum's stdnum/de/vat.py, https://github.com/arthurdejong/python-stdnum)
// so that a checksum failure can be tested.
func testSyntax(v string) (string, string, error) {
	s := compact(v)
	if len(s) < 4 {
		return "", "", errors.New("too short")
	}
	prefix, body := s[:2], s[2:]
	if prefix[0] < 'A' || prefix[0] > 'Z' || prefix[1] < 'A' || prefix[1] > 'Z' {
		return "", "", fmt.Errorf("%q: no country prefix", v)
	}
	if len(body) > 12 {
		return prefix, "", fmt.Errorf("%s: body too long", prefix)
	}
	if prefix == "DE" && !deCheck(body) {
		return prefix, body, fmt.Errorf("DE: check digit mismatch")
	}
	return prefix, body, nil
}

// deCheck is ISO 7064 MOD 11,10 over 9 digits.
func deCheck(body string) bool {
	if len(body) != 9 || !isDigits(body) || body[0] == '0' {
		return false
	}
	return deCheckDigit(body[:8]) == body[8]
}

func deCheckDigit(first8 string) byte {
	p := 10
	for i := 0; i < 8; i++ {
		s := (int(first8[i]-'0') + p) % 10
		if s == 0 {
			s = 10
		}
		p = (2 * s) % 11
	}
	return byte('0' + (11-p)%10)
}

// deNumbers returns n distinct syntactically valid DE numbers.
func deNumbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		first := fmt.Sprintf("%08d", 10000000+i*7919)
		out[i] = "DE" + first + string(deCheckDigit(first))
	}
	return out
}

// fakeClock is a settable clock; Sleep advances it instead of waiting and
// records what was asked.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 9, 14, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// viesReplyFunc answers one check-vat-number request: HTTP status and body.
type viesReplyFunc func(req viesRequest) (int, string)

// viesServer behaves like the VIES REST API: POST /check-vat-number with a
// CheckVatRequest, answers scripted per call.
type viesServer struct {
	*httptest.Server
	t      testing.TB
	mu     sync.Mutex
	reqs   []viesRequest
	times  []time.Time
	answer viesReplyFunc
}

func newVIESServer(t testing.TB, answer viesReplyFunc) *viesServer {
	s := &viesServer{t: t, answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *viesServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/check-vat-number" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		s.t.Errorf("Content-Type = %q", ct)
	}
	data, _ := io.ReadAll(r.Body)
	var req viesRequest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.t.Errorf("request body %s: %v", data, err)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	status, body := s.answer(req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *viesServer) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *viesServer) requests() []viesRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]viesRequest(nil), s.reqs...)
}

// viesValid is a CheckVatResponse for a confirmed number.
func viesValid(req viesRequest) string {
	id := ""
	if req.RequesterNumber != "" {
		id = "WAPIAAAAZ" + req.VATNumber
	}
	return fmt.Sprintf(`{"countryCode":%q,"vatNumber":%q,"requestDate":"2026-09-14T10:15:30.123+02:00","valid":true,`+
		`"requestIdentifier":%q,"name":"Example GmbH","address":"Musterstr. 1\n10115 Berlin","traderName":"","traderNameMatch":"NOT_PROCESSED"}`,
		req.CountryCode, req.VATNumber, id)
}

// viesInvalid is a CheckVatResponse for a number VIES does not know.
func viesInvalid(req viesRequest) string {
	return fmt.Sprintf(`{"countryCode":%q,"vatNumber":%q,"requestDate":"2026-09-14T10:15:30.123+02:00","valid":false,"requestIdentifier":"","name":"---","address":"---"}`,
		req.CountryCode, req.VATNumber)
}

// viesFault is the CommonResponse VIES sends for a fault.
func viesFault(code string) string {
	return fmt.Sprintf(`{"actionSucceed":false,"errorWrappers":[{"error":%q,"message":"fault %s"}]}`, code, code)
}

func newTestService(t *testing.T, c ServiceConfig) *Service {
	t.Helper()
	if c.Syntax == nil {
		c.Syntax = testSyntax
	}
	s, err := NewService(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

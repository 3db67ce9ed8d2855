package vies

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// hmrcServer behaves like HMRC's API platform: POST /oauth/token
// (client_credentials) issues numbered bearer tokens; GET
// /organisations/vat/check-vat-number/lookup/{target}[/{requester}] needs a
// current token and the v2 Accept header, then answers from lookup.
type hmrcServer struct {
	*httptest.Server
	t *testing.T

	mu          sync.Mutex
	tokens      int             // tokens issued
	valid       map[string]bool // tokens the API accepts
	expiresIn   int
	tokenStatus int // non-zero: the token endpoint answers this
	lookups     []string
	reject401   int // the next n lookups get 401 whatever the token
	lookup      func(target, requester string) (int, string)
}

func newHMRCServer(t *testing.T, lookup func(target, requester string) (int, string)) *hmrcServer {
	s := &hmrcServer{t: t, valid: map[string]bool{}, expiresIn: 14400, lookup: lookup}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("GET /organisations/vat/check-vat-number/lookup/{target}", s.check)
	mux.HandleFunc("GET /organisations/vat/check-vat-number/lookup/{target}/{requester}", s.check)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"code":"MATCHING_RESOURCE_NOT_FOUND","message":"A resource with the name in the request can not be found in the API"}`)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *hmrcServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.t.Error(err)
	}
	want := url.Values{"grant_type": {"client_credentials"}, "client_id": {"id-1"}, "client_secret": {"secret-1"}, "scope": {"read:vat"}}
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokenStatus != 0 {
		w.WriteHeader(s.tokenStatus)
		io.WriteString(w, `{"error":"invalid_client","error_description":"invalid client id or secret"}`)
		return
	}
	if r.PostForm.Encode() != want.Encode() {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":"invalid_client"}`)
		return
	}
	s.tokens++
	tok := fmt.Sprintf("tok-%d", s.tokens)
	s.valid[tok] = true
	fmt.Fprintf(w, `{"access_token":%q,"scope":"read:vat","expires_in":%d,"token_type":"bearer"}`, tok, s.expiresIn)
}

func (s *hmrcServer) check(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Accept") != "application/vnd.hmrc.2.0+json" {
		w.WriteHeader(406)
		io.WriteString(w, `{"code":"ACCEPT_HEADER_INVALID","message":"The accept header is missing or invalid"}`)
		return
	}
	s.mu.Lock()
	s.lookups = append(s.lookups, r.URL.Path)
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	ok := s.valid[tok] && s.reject401 == 0
	if s.reject401 > 0 {
		s.reject401--
	}
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(401)
		io.WriteString(w, `{"code":"INVALID_CREDENTIALS","message":"Invalid Authentication information provided"}`)
		return
	}
	status, body := s.lookup(r.PathValue("target"), r.PathValue("requester"))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *hmrcServer) counts() (tokens, lookups int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens, len(s.lookups)
}

func (s *hmrcServer) revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.valid = map[string]bool{}
}

// hmrcFound is the 200 body of 2.0/application.yaml's examples.
func hmrcFound(target, requester string) (int, string) {
	body := map[string]any{
		"target": map[string]any{
			"name": "Credite Sberger Donal Inc.", "vatNumber": target,
			"address": map[string]string{"line1": "131B Barton Hamlet", "postcode": "SW97 5CK", "countryCode": "GB"},
		},
		"processingDate": "2019-01-31T12:43:17+00:00",
	}
	if requester != "" {
		body["requester"] = requester
		body["consultationNumber"] = "ypAeKRPlW"
	}
	data, _ := json.Marshal(body)
	return 200, string(data)
}

func hmrcClient(s *hmrcServer, requester string, clock func() time.Time) *HMRCClient {
	return NewHMRC(HMRCConfig{BaseURL: s.URL, ClientID: "id-1", ClientSecret: "secret-1", RequesterVRN: requester, Clock: clock})
}

func TestHMRCValidUnverified(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	r := hmrcClient(srv, "", nil).Check(context.Background(), "553557881")
	want := Result{Status: StatusValid, Registry: RegistryHMRC, CountryCode: "GB", Number: "553557881",
		Name: "Credite Sberger Donal Inc.", Address: "131B Barton Hamlet\nSW97 5CK\nGB",
		RequestDate: time.Date(2019, 1, 31, 12, 43, 17, 0, time.UTC), Attempts: 1}
	if !r.RequestDate.Equal(want.RequestDate) {
		t.Errorf("RequestDate = %v", r.RequestDate)
	}
	r.RequestDate = want.RequestDate
	if r != want {
		t.Errorf("result = %+v\nwant     %+v", r, want)
	}
	if srv.lookups[0] != "/organisations/vat/check-vat-number/lookup/553557881" {
		t.Errorf("path = %s", srv.lookups[0])
	}
}

func TestHMRCValidVerifiedHasConsultationNumber(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	r := hmrcClient(srv, "GB 146 2959 99727", nil).Check(context.Background(), "553557881")
	if r.Status != StatusValid || r.RequestIdentifier != "ypAeKRPlW" || r.Detail != "" {
		t.Fatalf("result = %+v", r)
	}
	if srv.lookups[0] != "/organisations/vat/check-vat-number/lookup/553557881/146295999727" {
		t.Errorf("path = %s", srv.lookups[0])
	}
}

func TestHMRCVerifiedWithoutConsultationNumber(t *testing.T) {
	srv := newHMRCServer(t, func(target, _ string) (int, string) { return hmrcFound(target, "") })
	r := hmrcClient(srv, "146295999727", nil).Check(context.Background(), "553557881")
	if r.Status != StatusValid || r.RequestIdentifier != "" || !strings.Contains(r.Detail, "no consultationNumber") {
		t.Fatalf("result = %+v", r)
	}
}

func TestHMRCReplies(t *testing.T) {
	const (
		targetBad    = `{"code":"INVALID_REQUEST","message":"Invalid targetVrn - Vrn parameters should be 9 or 12 digits"}`
		requesterBad = `{"code":"INVALID_REQUEST","message":"Invalid requesterVrn - Vrn parameters should be 9 or 12 digits"}`
	)
	tests := []struct {
		name      string
		requester string
		status    int
		body      string
		want      Status
		fault     string
	}{
		{"404 NOT_FOUND", "", 404, `{"code":"NOT_FOUND","message":"targetVrn does not match a registered company"}`, StatusInvalid, FaultNotFound},
		{"404 from the gateway", "", 404, `{"code":"MATCHING_RESOURCE_NOT_FOUND","message":"A resource with the name in the request can not be found"}`, StatusUnavailable, "HTTP_404"},
		{"404 without body", "", 404, ``, StatusUnavailable, "HTTP_404"},
		{"400 target unverified", "", 400, targetBad, StatusInvalid, FaultInvalidInput},
		{"400 target verified", "146295999727", 400, targetBad, StatusInvalid, FaultInvalidInput},
		{"400 requester", "146295999727", 400, requesterBad, StatusUnavailable, "HTTP_400"},
		{"400 unnamed parameter", "146295999727", 400, `{"code":"INVALID_REQUEST","message":"bad"}`, StatusUnavailable, "HTTP_400"},
		{"400 other code", "", 400, `{"code":"BAD_REQUEST","message":"x"}`, StatusUnavailable, "HTTP_400"},
		{"403 requester not registered", "146295999727", 403, `{"code":"INVALID_REQUEST","message":"requesterVrn does not match a registered company"}`, StatusUnavailable, "HTTP_403"},
		{"429", "", 429, `{"code":"MESSAGE_THROTTLED_OUT","message":"The request for the API is throttled as you have exceeded your quota."}`, StatusUnavailable, "HTTP_429"},
		{"500", "", 500, `{"code":"INTERNAL_SERVER_ERROR","message":"Unknown error"}`, StatusUnavailable, "HTTP_500"},
		{"503 html", "", 503, `<html>down</html>`, StatusUnavailable, "HTTP_503"},
		{"200 not json", "", 200, `ok`, StatusUnavailable, FaultMalformed},
		{"200 without target", "", 200, `{"processingDate":"2019-01-31T12:43:17+00:00"}`, StatusUnavailable, FaultMalformed},
		{"200 about another VRN", "", 200, `{"target":{"name":"X","vatNumber":"980780684"},"processingDate":"2019-01-31T12:43:17+00:00"}`, StatusUnavailable, FaultMalformed},
		{"200 bad date", "", 200, `{"target":{"name":"X","vatNumber":"553557881"},"processingDate":"31/01/2019"}`, StatusUnavailable, FaultMalformed},
		{"200 minimal", "", 200, `{"target":{"name":"X"}}`, StatusValid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHMRCServer(t, func(string, string) (int, string) { return tt.status, tt.body })
			r := hmrcClient(srv, tt.requester, nil).Check(context.Background(), "553557881")
			if r.Status != tt.want || r.Fault != tt.fault {
				t.Fatalf("status/fault = %s/%q, want %s/%q (detail %q)", r.Status, r.Fault, tt.want, tt.fault, r.Detail)
			}
			if r.Registry != RegistryHMRC || r.CountryCode != "GB" || r.Number != "553557881" || r.Attempts != 1 {
				t.Errorf("identity = %+v", r)
			}
		})
	}
}

func TestHMRCTokenCachedUntilExpiry(t *testing.T) {
	clock := newFakeClock()
	srv := newHMRCServer(t, hmrcFound)
	srv.expiresIn = 3600
	c := hmrcClient(srv, "", clock.Now)
	for i := 0; i < 3; i++ {
		if r := c.Check(context.Background(), "553557881"); r.Status != StatusValid {
			t.Fatalf("lookup %d: %+v", i, r)
		}
	}
	if tokens, lookups := srv.counts(); tokens != 1 || lookups != 3 {
		t.Fatalf("tokens/lookups = %d/%d, want 1/3", tokens, lookups)
	}
	// Renewed a tenth of the lifetime (capped at a minute) before expiry.
	clock.Advance(3600*time.Second - time.Minute - time.Second)
	c.Check(context.Background(), "553557881")
	if tokens, _ := srv.counts(); tokens != 1 {
		t.Fatalf("token renewed too early: %d tokens", tokens)
	}
	clock.Advance(time.Second)
	c.Check(context.Background(), "553557881")
	if tokens, _ := srv.counts(); tokens != 2 {
		t.Fatalf("token not renewed at expiry: %d tokens", tokens)
	}
}

func TestHMRCRefreshesTokenOnceOn401(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	c := hmrcClient(srv, "", nil)
	if r := c.Check(context.Background(), "553557881"); r.Status != StatusValid {
		t.Fatal(r)
	}
	srv.revoke() // HMRC no longer accepts tok-1
	r := c.Check(context.Background(), "553557881")
	if r.Status != StatusValid {
		t.Fatalf("after revoke: %+v", r)
	}
	if tokens, lookups := srv.counts(); tokens != 2 || lookups != 3 {
		t.Errorf("tokens/lookups = %d/%d, want 2/3", tokens, lookups)
	}

	srv.mu.Lock()
	srv.reject401 = 2
	srv.mu.Unlock()
	r = c.Check(context.Background(), "553557881")
	if r.Status != StatusUnavailable || r.Fault != FaultAuth {
		t.Fatalf("401 twice: %+v", r)
	}
	if tokens, lookups := srv.counts(); tokens != 3 || lookups != 5 {
		t.Errorf("401 twice: tokens/lookups = %d/%d, want 3/5 (one refresh, no loop)", tokens, lookups)
	}
}

func TestHMRCTokenEndpointFailures(t *testing.T) {
	tests := []struct {
		status int
		fault  string
	}{
		{401, FaultAuth},
		{400, FaultAuth},
		{503, "HTTP_503"},
		{429, "HTTP_429"},
	}
	for _, tt := range tests {
		srv := newHMRCServer(t, hmrcFound)
		srv.tokenStatus = tt.status
		r := hmrcClient(srv, "", nil).Check(context.Background(), "553557881")
		if r.Status != StatusUnavailable || r.Fault != tt.fault {
			t.Errorf("token HTTP %d: %+v", tt.status, r)
		}
		if _, lookups := srv.counts(); lookups != 0 {
			t.Errorf("token HTTP %d: %d lookups without a token", tt.status, lookups)
		}
	}
	// Wrong credentials: the server's own check.
	srv := newHMRCServer(t, hmrcFound)
	r := NewHMRC(HMRCConfig{BaseURL: srv.URL, ClientID: "id-1", ClientSecret: "wrong"}).Check(context.Background(), "553557881")
	if r.Fault != FaultAuth || !strings.Contains(r.Detail, "invalid_client") {
		t.Errorf("wrong secret: %+v", r)
	}
}

func TestHMRCTokenReplies(t *testing.T) {
	for _, body := range []string{`{}`, `nope`, `{"access_token":"t","token_type":"mac"}`} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
		r := NewHMRC(HMRCConfig{BaseURL: ts.URL, ClientID: "a", ClientSecret: "b"}).Check(context.Background(), "553557881")
		ts.Close()
		if r.Status != StatusUnavailable || r.Fault != FaultMalformed {
			t.Errorf("token body %s: %+v", body, r)
		}
	}
}

func TestHMRCSeparateTokenURL(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	api := httptest.NewServer(srv.Config.Handler)
	defer api.Close()
	c := NewHMRC(HMRCConfig{BaseURL: api.URL, TokenURL: srv.URL + "/oauth/token", ClientID: "id-1", ClientSecret: "secret-1"})
	if r := c.Check(context.Background(), "553557881"); r.Status != StatusValid {
		t.Fatal(r)
	}
}

func TestHMRCConcurrentFirstLookupsFetchOneToken(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	c := hmrcClient(srv, "", nil)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Go(func() {
			if r := c.Check(context.Background(), "553557881"); r.Status != StatusValid {
				t.Error(r)
			}
		})
	}
	wg.Wait()
	if tokens, _ := srv.counts(); tokens != 1 {
		t.Errorf("%d tokens, want 1", tokens)
	}
}

func TestHMRCLocalRefusals(t *testing.T) {
	srv := newHMRCServer(t, hmrcFound)
	tests := []struct {
		name  string
		c     HMRCConfig
		body  string
		fault string
	}{
		{"government department", HMRCConfig{ClientID: "id-1", ClientSecret: "secret-1"}, "GD100", FaultUnsupported},
		{"health authority", HMRCConfig{ClientID: "id-1", ClientSecret: "secret-1"}, "HA501", FaultUnsupported},
		{"no credentials", HMRCConfig{}, "553557881", FaultAuth},
		{"bad requester", HMRCConfig{ClientID: "id-1", ClientSecret: "secret-1", RequesterVRN: "12345"}, "553557881", FaultRequesterInfo},
	}
	for _, tt := range tests {
		tt.c.BaseURL = srv.URL
		r := NewHMRC(tt.c).Check(context.Background(), tt.body)
		if r.Status != StatusUnavailable || r.Fault != tt.fault {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
	if tokens, lookups := srv.counts(); tokens+lookups != 0 {
		t.Errorf("%d token requests and %d lookups, want none", tokens, lookups)
	}
}

func TestHMRCSlowReplyTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newHMRCServer(t, func(target, requester string) (int, string) {
		<-release
		return hmrcFound(target, requester)
	})
	c := NewHMRC(HMRCConfig{BaseURL: srv.URL, ClientID: "id-1", ClientSecret: "secret-1", Timeout: 50 * time.Millisecond})
	if r := c.Check(context.Background(), "553557881"); r.Status != StatusUnavailable || r.Fault != FaultTimeout {
		t.Fatalf("result = %+v", r)
	}
}

func TestUKVRN(t *testing.T) {
	tests := map[string]string{
		"GB980780684":    "980780684",
		"gb 980 7806 84": "980780684",
		"980780684":      "980780684",
		"GB242338087388": "242338087388",
		"GD100":          "GD100",
	}
	for in, want := range tests {
		if got := ukVRN(in); got != want {
			t.Errorf("ukVRN(%q) = %q, want %q", in, got, want)
		}
	}
}

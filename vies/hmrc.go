package vies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultHMRCBaseURL is HMRC's production API host; the sandbox is
// https://test-api.service.hmrc.gov.uk (https://github.com/hmrc/vat-registered-companies-api/blob/main/public/api/conf/2.0/application.yaml).
const DefaultHMRCBaseURL = "https://api.service.hmrc.gov.uk"

// hmrcAccept selects version 2.0 of "Check a UK VAT number" (version 1 was
// removed in 2025; hmrc/vat-registered-companies-api, 2.0/application.yaml).
const hmrcAccept = "application/vnd.hmrc.2.0+json"

// HMRCConfig configures an [HMRCClient]. Every zero value has a default,
// except the credentials.
type HMRCConfig struct {
	// BaseURL of the API; zero = DefaultHMRCBaseURL.
	BaseURL string
	// TokenURL of the OAuth 2.0 token endpoint; zero = BaseURL + "/oauth/token".
	TokenURL string
	// ClientID and ClientSecret of the application registered on the HMRC
	// Developer Hub, subscribed to the API with scope read:vat. Without them
	// every Check is unavailable with AUTH_FAILED.
	ClientID     string
	ClientSecret string
	// RequesterVRN is the requester's own UK VRN (9 or 12 digits; a GB
	// prefix and separators are stripped). When set, lookups use the
	// verified variant and HMRC returns a consultationNumber, the proof. A
	// value that is not 9 or 12 digits makes every Check unavailable with
	// INVALID_REQUESTER_INFO rather than silently unverified.
	RequesterVRN string
	// HTTPClient makes the calls; zero = a new client on http.DefaultTransport.
	HTTPClient *http.Client
	// Timeout bounds one call (the token request and the lookup each get
	// it); zero = DefaultTimeout.
	Timeout time.Duration
	// Clock dates answers and expires the cached token; zero = time.Now.
	Clock func() time.Time
}

// HMRCClient checks UK VRNs with HMRC's "Check a UK VAT number" API v2. It
// caches the OAuth token until shortly before it expires and is safe for
// concurrent use.
type HMRCClient struct {
	base      string
	tokenURL  string
	id        string
	secret    string
	requester string
	client    *http.Client
	timeout   time.Duration
	clock     func() time.Time

	fetching chan struct{} // one token request at a time
	mu       sync.Mutex    // guards token, expires
	token    string
	expires  time.Time
}

// NewHMRC returns an HMRC client.
func NewHMRC(c HMRCConfig) *HMRCClient {
	h := &HMRCClient{
		base:     strings.TrimRight(c.BaseURL, "/"),
		tokenURL: c.TokenURL,
		id:       c.ClientID,
		secret:   c.ClientSecret,
		client:   c.HTTPClient,
		timeout:  c.Timeout,
		clock:    c.Clock,
		fetching: make(chan struct{}, 1),
	}
	if h.base == "" {
		h.base = DefaultHMRCBaseURL
	}
	if h.tokenURL == "" {
		h.tokenURL = h.base + "/oauth/token"
	}
	if h.client == nil {
		h.client = &http.Client{}
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if h.clock == nil {
		h.clock = time.Now
	}
	h.requester = ukVRN(c.RequesterVRN)
	return h
}

// ukVRN compacts a UK VRN and drops a GB prefix in front of 9 or 12 digits.
func ukVRN(s string) string {
	s = compact(s)
	if strings.HasPrefix(s, "GB") && (len(s) == 11 || len(s) == 14) {
		s = s[2:]
	}
	return s
}

// isVRN reports whether s is what the API accepts: 9 or 12 digits
// (targetVrn / requesterVrn, 2.0/application.yaml).
func isVRN(s string) bool { return (len(s) == 9 || len(s) == 12) && isDigits(s) }

// Check asks HMRC once (plus one token refresh on a 401), without retry or
// rate limiting. body is the VRN without the GB prefix.
func (c *HMRCClient) Check(ctx context.Context, body string) Result {
	target := ukVRN(body)
	bad := func(fault, format string, args ...any) Result {
		return unavailable(RegistryHMRC, "GB", target, c.clock(), fault, "vies: GB: "+fmt.Sprintf(format, args...))
	}
	if !isVRN(target) {
		// GBGD/GBHA (government departments, health authorities) pass the
		// syntax rules (python-stdnum stdnum/gb/vat.py) but the API only takes 9
		// or 12 digits (https://github.com/hmrc/vat-registered-companies-api/blob/main/public/api/conf/2.0/application.yaml).
		return bad(FaultUnsupported, "HMRC checks only 9- or 12-digit VRNs; %q needs manual review", clip(body))
	}
	if c.requester != "" && !isVRN(c.requester) {
		return bad(FaultRequesterInfo, "configured requester VRN %q is not 9 or 12 digits", clip(c.requester))
	}
	if c.id == "" || c.secret == "" {
		return bad(FaultAuth, "no HMRC client credentials configured")
	}
	u := c.base + "/organisations/vat/check-vat-number/lookup/" + url.PathEscape(target)
	verified := c.requester != ""
	if verified {
		u += "/" + url.PathEscape(c.requester)
	}
	stale := ""
	for try := 0; ; try++ {
		token, f := c.bearer(ctx, stale)
		if f != nil {
			return bad(f.fault, "%s", f.detail)
		}
		header := http.Header{"Accept": {hmrcAccept}, "Authorization": {"Bearer " + token}}
		rep, f := call(ctx, c.client, c.timeout, http.MethodGet, u, header, nil)
		if f != nil {
			r := bad(f.fault, "%s", f.detail)
			r.Attempts = 1
			return r
		}
		if rep.status == http.StatusUnauthorized {
			if try == 0 {
				// The token may have been revoked or expired early: fetch a
				// new one once.
				stale = token
				continue
			}
			r := bad(FaultAuth, "HMRC rejected a freshly issued token (HTTP 401)%s", hmrcErrorText(rep.body))
			r.Attempts = 1
			return r
		}
		r := parseHMRC(rep.status, rep.body, target, verified, c.clock())
		r.Attempts = 1
		if r.Status == StatusValid && verified && r.RequestIdentifier == "" {
			r.Detail = "vies: GB: requester VRN sent but no consultationNumber returned"
		}
		return r
	}
}

// bearer returns a cached token, or fetches one when there is none, it
// has expired, or it equals stale (rejected by the API).
func (c *HMRCClient) bearer(ctx context.Context, stale string) (string, *failure) {
	if t, ok := c.cachedToken(stale); ok {
		return t, nil
	}
	select {
	case c.fetching <- struct{}{}:
	case <-ctx.Done():
		return "", classify(ctx, ctx, c.timeout, ctx.Err())
	}
	defer func() { <-c.fetching }()
	// Another caller may have fetched it while this one waited.
	if t, ok := c.cachedToken(stale); ok {
		return t, nil
	}
	return c.fetchToken(ctx)
}

func (c *HMRCClient) cachedToken(stale string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.token != stale && c.clock().Before(c.expires) {
		return c.token, true
	}
	return "", false
}

// tokenReply is the OAuth 2.0 access token response (RFC 6749 §5.1) and
// error response (§5.2).
type tokenReply struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// fetchToken runs the client-credentials grant (RFC 6749 §4.4) with the
// credentials in the form body, as HMRC's Developer Hub documents, and the
// scope read:vat (2.0/application.yaml).
func (c *HMRCClient) fetchToken(ctx context.Context) (string, *failure) {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.id},
		"client_secret": {c.secret},
		"scope":         {"read:vat"},
	}
	header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}}
	rep, f := call(ctx, c.client, c.timeout, http.MethodPost, c.tokenURL, header, []byte(form.Encode()))
	if f != nil {
		f.detail = "oauth token: " + f.detail
		return "", f
	}
	var t tokenReply
	jsonErr := json.Unmarshal(rep.body, &t)
	switch {
	case rep.status == http.StatusOK:
	case rep.status == http.StatusTooManyRequests || rep.status >= 500:
		return "", &failure{httpFault(rep.status), fmt.Sprintf("oauth token: HTTP %d", rep.status)}
	case rep.status >= 400 && rep.status < 500:
		d := fmt.Sprintf("oauth token: HTTP %d", rep.status)
		if jsonErr == nil && t.Error != "" {
			d += ": " + clip(t.Error+" "+t.ErrorDescription)
		}
		return "", &failure{FaultAuth, d}
	default:
		return "", &failure{httpFault(rep.status), fmt.Sprintf("oauth token: HTTP %d", rep.status)}
	}
	if jsonErr != nil || t.AccessToken == "" {
		return "", &failure{FaultMalformed, "oauth token: reply has no access_token"}
	}
	if t.TokenType != "" && !strings.EqualFold(t.TokenType, "bearer") {
		return "", &failure{FaultMalformed, fmt.Sprintf("oauth token: token_type %q is not bearer", clip(t.TokenType))}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token, c.expires = t.AccessToken, time.Time{}
	if t.ExpiresIn > 0 {
		// Renew a little early (a tenth of the lifetime, at most a minute)
		// so that a token does not expire between check and use.
		life := time.Duration(t.ExpiresIn) * time.Second
		c.expires = c.clock().Add(life - min(time.Minute, life/10))
	}
	return t.AccessToken, nil
}

// hmrcReply is the 200 body of both lookup variants plus the error body
// {code, message} (2.0/application.yaml).
type hmrcReply struct {
	Target *struct {
		Name      string `json:"name"`
		VATNumber string `json:"vatNumber"`
		Address   *struct {
			Line1       string `json:"line1"`
			Line2       string `json:"line2"`
			Line3       string `json:"line3"`
			Line4       string `json:"line4"`
			Line5       string `json:"line5"`
			Postcode    string `json:"postcode"`
			CountryCode string `json:"countryCode"`
		} `json:"address"`
	} `json:"target"`
	ProcessingDate     *string `json:"processingDate"`
	ConsultationNumber string  `json:"consultationNumber"`
	Code               string  `json:"code"`
	Message            string  `json:"message"`
}

// parseHMRC turns one HMRC lookup reply (not 401) into a Result for target.
// verified says whether the requester VRN was in the path.
func parseHMRC(status int, data []byte, target string, verified bool, now time.Time) Result {
	bad := func(fault, format string, args ...any) Result {
		return unavailable(RegistryHMRC, "GB", target, now, fault, "vies: GB: "+fmt.Sprintf(format, args...))
	}
	invalid := func(fault, format string, args ...any) Result {
		return Result{Status: StatusInvalid, Registry: RegistryHMRC, CountryCode: "GB", Number: target,
			RequestDate: now, Fault: fault, Detail: "vies: GB: " + fmt.Sprintf(format, args...)}
	}
	var v hmrcReply
	t := bytes.TrimSpace(data)
	isJSON := len(t) > 0 && t[0] == '{' && json.Unmarshal(data, &v) == nil
	code, _ := faultCode(v.Code)

	switch {
	case status == http.StatusOK:
		return hmrcValid(v, isJSON, target, now, bad)
	case status == http.StatusNotFound && code == "NOT_FOUND":
		// Only HMRC's own NOT_FOUND is an answer; a gateway 404
		// (MATCHING_RESOURCE_NOT_FOUND: wrong URL or version) is not.
		return invalid(FaultNotFound, "HMRC: %s", clip(v.Message))
	case status == http.StatusBadRequest && code == "INVALID_REQUEST":
		// 400 INVALID_REQUEST names the bad path parameter only in its
		// message ("Invalid targetVrn …" / "Invalid requesterVrn …"). With
		// no requester in the path it can only be the target.
		switch msg := v.Message; {
		case !verified || strings.Contains(msg, "targetVrn"):
			return invalid(FaultInvalidInput, "HMRC rejected the VRN: %s", clip(msg))
		case strings.Contains(msg, "requesterVrn"):
			return bad(httpFault(status), "HMRC rejected the configured requester VRN: %s", clip(msg))
		default:
			return bad(httpFault(status), "HMRC INVALID_REQUEST without naming the parameter: %s", clip(msg))
		}
	case status == http.StatusForbidden:
		// 403 INVALID_REQUEST: the requester VRN is not registered — a
		// configuration problem, not an invalid buyer (the API's documented
		// errors, https://github.com/hmrc/vat-registered-companies-api/blob/main/public/api/conf/2.0/application.yaml).
		return bad(httpFault(status), "HMRC refused the lookup%s", hmrcErrorText(data))
	}
	return bad(httpFault(status), "HMRC HTTP %d%s", status, hmrcErrorText(data))
}

func hmrcValid(v hmrcReply, isJSON bool, target string, now time.Time, bad func(string, string, ...any) Result) Result {
	if !isJSON || v.Target == nil {
		return bad(FaultMalformed, "HTTP 200 without a target")
	}
	if echo := compact(v.Target.VATNumber); echo != "" && echo != target && echo != "GB"+target {
		return bad(FaultMalformed, "HTTP 200 about VRN %q", clip(v.Target.VATNumber))
	}
	date := now
	if v.ProcessingDate != nil && strings.TrimSpace(*v.ProcessingDate) != "" {
		d, err := parseRegistryDate(*v.ProcessingDate)
		if err != nil {
			return bad(FaultMalformed, "HTTP 200: %v", err)
		}
		date = d
	}
	var lines []string
	if a := v.Target.Address; a != nil {
		for _, l := range []string{a.Line1, a.Line2, a.Line3, a.Line4, a.Line5, a.Postcode, a.CountryCode} {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return Result{Status: StatusValid, Registry: RegistryHMRC, CountryCode: "GB", Number: target,
		Name: v.Target.Name, Address: strings.Join(lines, "\n"), RequestDate: date,
		RequestIdentifier: v.ConsultationNumber}
}

// hmrcErrorText renders an HMRC {code, message} body for Result.Detail.
func hmrcErrorText(data []byte) string {
	var e struct{ Code, Message string }
	if json.Unmarshal(data, &e) != nil || (e.Code == "" && e.Message == "") {
		return ""
	}
	return ": " + clip(strings.TrimSpace(e.Code+" "+e.Message))
}

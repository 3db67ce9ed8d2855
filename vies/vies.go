package vies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DefaultVIESBaseURL is the EU VIES REST API
// (https://ec.europa.eu/assets/taxud/vow-information/swagger_publicVAT.yaml); the client posts
// to {base}/check-vat-number.
const DefaultVIESBaseURL = "https://ec.europa.eu/taxation_customs/vies/rest-api"

// DefaultTimeout bounds one registry call. Reads past 5 s are common for
// VIES (https://github.com/OCA/l10n-france/issues/591), so 10 s.
const DefaultTimeout = 10 * time.Second

// VIESConfig configures a [VIESClient]. Every zero value has a default.
type VIESConfig struct {
	// BaseURL of the REST API; zero = DefaultVIESBaseURL. Trailing slashes
	// are ignored.
	BaseURL string
	// RequesterCountry and RequesterNumber are the requester's own VIES
	// country code (EL for Greece) and VAT number. When both are set they
	// are sent, and only then does VIES return a requestIdentifier, the
	// proof of the consultation (https://ec.europa.eu/assets/taxud/vow-information/swagger_publicVAT.yaml). The
	// number may carry its country prefix and separators; both are
	// stripped. Setting only one of them is a configuration error: every
	// Check is then unavailable with INVALID_REQUESTER_INFO rather than
	// silently made without proof.
	RequesterCountry string
	RequesterNumber  string
	// HTTPClient makes the calls; zero = a new client on
	// http.DefaultTransport. Its own Timeout, if any, also applies.
	HTTPClient *http.Client
	// Timeout bounds one call; zero = DefaultTimeout.
	Timeout time.Duration
	// Clock dates answers that carry no requestDate and unavailable
	// results; zero = time.Now.
	Clock func() time.Time
}

// VIESClient checks numbers with the VIES REST API, one call per Check.
// It is safe for concurrent use.
type VIESClient struct {
	url          string
	reqCountry   string
	reqNumber    string
	client       *http.Client
	timeout      time.Duration
	clock        func() time.Time
	hasRequester bool
	requesterErr string // why the configured requester is unusable
}

// NewVIES returns a VIES client.
func NewVIES(c VIESConfig) *VIESClient {
	v := &VIESClient{
		url:     strings.TrimRight(c.BaseURL, "/"),
		client:  c.HTTPClient,
		timeout: c.Timeout,
		clock:   c.Clock,
	}
	if v.url == "" {
		v.url = DefaultVIESBaseURL
	}
	v.url += "/check-vat-number"
	if v.client == nil {
		v.client = &http.Client{}
	}
	if v.timeout <= 0 {
		v.timeout = DefaultTimeout
	}
	if v.clock == nil {
		v.clock = time.Now
	}
	cc := viesCountry(c.RequesterCountry)
	num := stripPrefix(compact(c.RequesterNumber), cc)
	switch {
	case cc != "" && num != "":
		v.reqCountry, v.reqNumber, v.hasRequester = cc, num, true
	case cc != "" || num != "":
		v.requesterErr = "requester country and number must be configured together"
	}
	return v
}

// viesRequest is CheckVatRequest of swagger_publicVAT.yaml; the trader*
// fields (approximate matching) are not used.
type viesRequest struct {
	CountryCode              string `json:"countryCode"`
	VATNumber                string `json:"vatNumber"`
	RequesterMemberStateCode string `json:"requesterMemberStateCode,omitempty"`
	RequesterNumber          string `json:"requesterNumber,omitempty"`
}

// Check asks VIES once, without retry or rate limiting (the [Service] adds
// those). prefix is the VIES country code (GR is accepted for EL), body the
// number without it (upper-cased, separators dropped).
func (c *VIESClient) Check(ctx context.Context, prefix, body string) Result {
	cc, body := viesCountry(prefix), compact(body)
	if c.requesterErr != "" {
		return unavailable(RegistryVIES, cc, body, c.clock(), FaultRequesterInfo, "vies: "+cc+": "+c.requesterErr)
	}
	payload, err := json.Marshal(viesRequest{CountryCode: cc, VATNumber: body,
		RequesterMemberStateCode: c.reqCountry, RequesterNumber: c.reqNumber})
	if err != nil { // strings only: cannot happen
		return unavailable(RegistryVIES, cc, body, c.clock(), FaultMalformed, err.Error())
	}
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	rep, f := call(ctx, c.client, c.timeout, http.MethodPost, c.url, header, payload)
	now := c.clock()
	var r Result
	if f != nil {
		r = unavailable(RegistryVIES, cc, body, now, f.fault, "vies: "+cc+": "+f.detail)
	} else {
		r = parseVIES(rep.status, rep.body, cc, body, now)
	}
	r.Attempts = 1
	if r.Status == StatusValid && c.hasRequester && r.RequestIdentifier == "" {
		r.Detail = "vies: " + cc + ": requester number sent but no requestIdentifier returned"
	}
	return r
}

// viesReply is the union of the shapes VIES answers check-vat-number with:
// CheckVatResponse on 200, CommonResponse on 400/500 (and, in practice,
// sometimes on 200), plus userError/isValid of the GET /ms/… shape, which
// carries faults inside a 200 (https://ec.europa.eu/assets/taxud/vow-information/swagger_publicVAT.yaml;
// https://github.com/annuaire-entreprises-data-gouv-fr/site/issues/475).
// Pointers tell absent from zero.
type viesReply struct {
	CountryCode       *string `json:"countryCode"`
	VATNumber         *string `json:"vatNumber"`
	RequestDate       *string `json:"requestDate"`
	Valid             *bool   `json:"valid"`
	IsValid           *bool   `json:"isValid"`
	RequestIdentifier string  `json:"requestIdentifier"`
	Name              string  `json:"name"`
	Address           string  `json:"address"`
	UserError         string  `json:"userError"`
	ActionSucceed     *bool   `json:"actionSucceed"`
	ErrorWrappers     []struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	} `json:"errorWrappers"`
}

// parseVIES turns one VIES reply into a Result for number (body) in cc. The
// decision table is in the package doc ("# Wire format"); in short, invalid
// needs a definitive answer and everything unclear is unavailable.
func parseVIES(status int, data []byte, cc, number string, now time.Time) Result {
	bad := func(fault, format string, args ...any) Result {
		return unavailable(RegistryVIES, cc, number, now, fault, "vies: "+cc+": "+fmt.Sprintf(format, args...))
	}
	httpBad := func(why string) Result {
		if status == http.StatusOK {
			return bad(FaultMalformed, "HTTP 200: %s", why)
		}
		return bad(httpFault(status), "HTTP %d: %s", status, why)
	}
	var v viesReply
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return httpBad("reply is not a JSON object")
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return httpBad("cannot decode reply: " + clip(err.Error()))
	}

	// CommonResponse: the error code decides, whatever the HTTP status.
	if (v.ActionSucceed != nil && !*v.ActionSucceed) || len(v.ErrorWrappers) > 0 {
		return viesErrors(v, status, cc, number, now, httpBad)
	}
	if status != http.StatusOK {
		return httpBad("no error code in reply")
	}

	userError, ok := faultCode(v.UserError)
	if !ok && strings.TrimSpace(v.UserError) != "" {
		return bad(FaultMalformed, "HTTP 200: unreadable userError %q", clip(v.UserError))
	}
	switch userError {
	case "", "VALID", "INVALID", FaultInvalidInput:
	default:
		// A fault delivered as HTTP 200 (often with valid:false and name
		// "---", annuaire-entreprises#475) is a fault, never invalid.
		return bad(userError, "VIES fault %s (HTTP 200)", userError)
	}

	valid := v.Valid
	if v.IsValid != nil {
		if valid != nil && *valid != *v.IsValid {
			return bad(FaultMalformed, "HTTP 200: valid and isValid disagree")
		}
		valid = v.IsValid
	}
	if valid == nil && userError == FaultInvalidInput {
		valid = new(bool) // INVALID_INPUT alone says "not valid"
	}
	if valid == nil {
		return bad(FaultMalformed, "HTTP 200: reply has no valid field")
	}
	if (*valid && userError == "INVALID") || (*valid && userError == FaultInvalidInput) || (!*valid && userError == "VALID") {
		return bad(FaultMalformed, "HTTP 200: valid:%t contradicts userError %s", *valid, userError)
	}
	if v.CountryCode != nil && *v.CountryCode != "" && viesCountry(*v.CountryCode) != cc {
		return bad(FaultMalformed, "HTTP 200: reply is about country %q", clip(*v.CountryCode))
	}
	if v.VATNumber != nil && *v.VATNumber != "" {
		if echo := compact(*v.VATNumber); echo != number && echo != cc+number {
			return bad(FaultMalformed, "HTTP 200: reply is about number %q", clip(*v.VATNumber))
		}
	}
	date := now
	if v.RequestDate != nil && strings.TrimSpace(*v.RequestDate) != "" {
		d, err := parseRegistryDate(*v.RequestDate)
		if err != nil {
			return bad(FaultMalformed, "HTTP 200: %v", err)
		}
		date = d
	}
	if userError == FaultInvalidInput {
		// Checked like any answer above: an INVALID_INPUT beside valid:true
		// or about another number is no answer about this one.
		return Result{Status: StatusInvalid, Registry: RegistryVIES, CountryCode: cc, Number: number,
			RequestDate: date, RequestIdentifier: v.RequestIdentifier, Fault: FaultInvalidInput,
			Detail: "vies: " + cc + ": VIES answered INVALID_INPUT"}
	}
	if !*valid {
		return Result{Status: StatusInvalid, Registry: RegistryVIES, CountryCode: cc, Number: number,
			RequestDate: date, RequestIdentifier: v.RequestIdentifier, Fault: FaultInvalid}
	}
	return Result{Status: StatusValid, Registry: RegistryVIES, CountryCode: cc, Number: number,
		Name: v.Name, Address: v.Address, RequestDate: date, RequestIdentifier: v.RequestIdentifier}
}

// viesErrors decides a CommonResponse: invalid only when every error code
// is INVALID_INPUT (bad country code or number, a definitive answer about
// the input: https://ec.europa.eu/taxation_customs/vies/checkVatService.wsdl); any other code is a fault.
func viesErrors(v viesReply, status int, cc, number string, now time.Time, httpBad func(string) Result) Result {
	fault, message, sawInvalidInput := "", "", false
	for _, w := range v.ErrorWrappers {
		code, ok := faultCode(w.Error)
		switch {
		case strings.TrimSpace(w.Error) == "":
			continue
		case !ok:
			return httpBad(fmt.Sprintf("unreadable error code %q", clip(w.Error)))
		case code == FaultInvalidInput:
			sawInvalidInput = true
		case fault == "":
			fault, message = code, w.Message
		}
	}
	switch {
	case fault != "":
		d := fmt.Sprintf("vies: %s: VIES fault %s (HTTP %d)", cc, fault, status)
		if m := clip(message); m != "" {
			d += ": " + m
		}
		return unavailable(RegistryVIES, cc, number, now, fault, d)
	case sawInvalidInput:
		return Result{Status: StatusInvalid, Registry: RegistryVIES, CountryCode: cc, Number: number,
			RequestDate: now, Fault: FaultInvalidInput,
			Detail: fmt.Sprintf("vies: %s: VIES answered INVALID_INPUT (HTTP %d)", cc, status)}
	}
	return httpBad("actionSucceed:false without an error code")
}

// parseRegistryDate reads the dates VIES and HMRC send: RFC 3339 date-time
// with offset and optional fraction (REST requestDate, HMRC
// processingDate), xsd:date with offset (SOAP requestDate, e.g.
// "2024-01-15+01:00") and a bare date (read as UTC midnight). The offset is
// kept as sent, in a fixed zone: time.Parse would otherwise pick the
// machine's Local zone when the offsets agree, and results must not depend
// on the machine.
func parseRegistryDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, "2006-01-02Z07:00", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			_, off := t.Zone()
			if off == 0 {
				return t.UTC(), nil
			}
			return t.In(time.FixedZone("", off)), nil
		}
	}
	return time.Time{}, fmt.Errorf("unreadable date %q", clip(s))
}

// viesCountry upper-cases a VIES country code and maps ISO GR to VIES EL
// (VIES uses EL: https://github.com/zapadi/vies-dotnet; python-stdnum
// stdnum/gr/vat.py).
func viesCountry(cc string) string {
	cc = strings.ToUpper(strings.TrimSpace(cc))
	if cc == "GR" {
		return "EL"
	}
	return cc
}

// compact upper-cases s and keeps letters, digits and the characters VIES
// allows in a number ("+", "*"; WSDL pattern [0-9A-Za-z\+\*\.]{2,12}),
// dropping separators such as spaces, dots, dashes, slashes and colons.
func compact(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '*' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripPrefix removes a leading country code (and GR for EL) from a
// compacted number. A French body is 11 characters and its two-character key
// may itself be the letters "FR" (python-stdnum stdnum/fr/tva.py,
// https://github.com/arthurdejong/python-stdnum), so an 11-character FR number
// is left alone.
func stripPrefix(num, cc string) string {
	if cc == "FR" && len(num) == 11 {
		return num
	}
	if cc != "" && strings.HasPrefix(num, cc) {
		return num[len(cc):]
	}
	if cc == "EL" && strings.HasPrefix(num, "GR") {
		return num[2:]
	}
	return num
}

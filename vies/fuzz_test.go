package vies

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

var fuzzNow = time.Date(2026, 9, 14, 8, 0, 0, 0, time.UTC)

// FuzzParseVIES checks the VIES reply parser's promises on any input: it
// never panics, answers for the number asked, is deterministic, never calls
// a non-200 reply valid, and calls a reply invalid only on a definitive
// answer (valid:false or INVALID_INPUT in the body).
func FuzzParseVIES(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30.123+02:00","valid":true,"requestIdentifier":"WAPI","name":"X","address":"Y"}`},
		{200, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14","valid":false,"name":"---"}`},
		{200, `{"isValid":false,"userError":"MS_MAX_CONCURRENT_REQ","name":"---"}`},
		{200, `{"isValid":false,"userError":"INVALID"}`},
		{200, `{"valid":true,"userError":"INVALID"}`},
		{200, viesFault("MS_UNAVAILABLE")},
		{400, viesFault("INVALID_INPUT")},
		{400, `{"actionSucceed":false,"errorWrappers":[{"error":"INVALID_INPUT"},{"error":"TIMEOUT"}]}`},
		{500, viesFault("SERVICE_UNAVAILABLE")},
		{503, `<html></html>`},
		{200, `{"valid":`},
		{200, `null`},
		{200, ``},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		r := parseVIES(status, body, "DE", "136695976", fuzzNow)
		if r.Registry != RegistryVIES || r.CountryCode != "DE" || r.Number != "136695976" {
			t.Fatalf("identity changed: %+v", r)
		}
		if r.RequestDate.IsZero() {
			t.Fatal("zero RequestDate")
		}
		if again := parseVIES(status, body, "DE", "136695976", fuzzNow); !reflect.DeepEqual(r, again) {
			t.Fatalf("not deterministic: %+v vs %+v", r, again)
		}
		upper := bytes.ToUpper(body)
		switch r.Status {
		case StatusValid:
			if status != 200 || r.Fault != "" {
				t.Fatalf("valid from HTTP %d / fault %q", status, r.Fault)
			}
			if !bytes.Contains(upper, []byte("TRUE")) {
				t.Fatalf("valid without a true in %q", body)
			}
		case StatusInvalid:
			switch r.Fault {
			case FaultInvalidInput:
				if !bytes.Contains(upper, []byte("INVALID_INPUT")) {
					t.Fatalf("INVALID_INPUT without it in the body %q", body)
				}
			case FaultInvalid:
				if status != 200 || !bytes.Contains(upper, []byte("FALSE")) {
					t.Fatalf("INVALID from HTTP %d body %q", status, body)
				}
			default:
				t.Fatalf("invalid with fault %q", r.Fault)
			}
			if r.Name != "" || r.Address != "" {
				t.Fatal("name/address on invalid")
			}
		case StatusUnavailable:
			if _, ok := faultCode(r.Fault); !ok || r.Detail == "" {
				t.Fatalf("unavailable with fault %q detail %q", r.Fault, r.Detail)
			}
			if r.Name != "" || r.Address != "" || r.RequestIdentifier != "" {
				t.Fatal("registry data on unavailable")
			}
		default:
			t.Fatalf("status %q", r.Status)
		}
	})
}

// FuzzParseHMRC: invalid only from 404 NOT_FOUND or 400, valid only from 200.
func FuzzParseHMRC(f *testing.F) {
	_, found := hmrcFound("553557881", "146295999727")
	f.Add(200, []byte(found), true)
	f.Add(404, []byte(`{"code":"NOT_FOUND","message":"targetVrn does not match a registered company"}`), false)
	f.Add(400, []byte(`{"code":"INVALID_REQUEST","message":"Invalid requesterVrn - Vrn parameters should be 9 or 12 digits"}`), true)
	f.Add(403, []byte(`{"code":"INVALID_REQUEST","message":"requesterVrn does not match a registered company"}`), true)
	f.Add(500, []byte(`{"code":"INTERNAL_SERVER_ERROR","message":"Unknown error"}`), false)
	f.Fuzz(func(t *testing.T, status int, body []byte, verified bool) {
		r := parseHMRC(status, body, "553557881", verified, fuzzNow)
		if r.Registry != RegistryHMRC || r.CountryCode != "GB" || r.Number != "553557881" || r.RequestDate.IsZero() {
			t.Fatalf("identity: %+v", r)
		}
		switch r.Status {
		case StatusValid:
			if status != 200 || r.Fault != "" {
				t.Fatalf("valid from HTTP %d", status)
			}
		case StatusInvalid:
			ok := (status == 404 && r.Fault == FaultNotFound) || (status == 400 && r.Fault == FaultInvalidInput)
			if !ok || (verified && status == 400 && !strings.Contains(string(body), "targetVrn")) {
				t.Fatalf("invalid from HTTP %d (%s) verified=%t: %q", status, r.Fault, verified, body)
			}
		case StatusUnavailable:
			if _, ok := faultCode(r.Fault); !ok {
				t.Fatalf("fault %q", r.Fault)
			}
		default:
			t.Fatalf("status %q", r.Status)
		}
	})
}

// FuzzParseRegistryDate: an accepted date survives a round trip through
// its RFC 3339 form and its zone never depends on the machine.
func FuzzParseRegistryDate(f *testing.F) {
	for _, s := range []string{"2026-09-14T10:15:30.123+02:00", "2026-09-14+02:00", "2026-09-14", "2026-09-14Z", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseRegistryDate(s)
		if err != nil {
			return
		}
		if loc := d.Location(); loc == time.Local && loc != time.UTC {
			t.Fatalf("Local zone leaked: %v", d)
		}
		back, err := time.Parse(time.RFC3339Nano, d.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(d) {
			t.Fatalf("round trip %q → %v → %v, %v", s, d, back, err)
		}
	})
}

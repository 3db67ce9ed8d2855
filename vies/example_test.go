package vies_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/vies"
)

// splitPrefix stands in for vat.ValidateNumber, which the engine injects:
// it checks syntax and check digits and splits off the country prefix.
func splitPrefix(n string) (prefix, body string, err error) {
	n = strings.ToUpper(strings.ReplaceAll(n, " ", ""))
	if len(n) < 4 {
		return "", "", errors.New("too short")
	}
	return n[:2], n[2:], nil
}

func ExampleService_Check() {
	// A stand-in for VIES; in production leave BaseURL empty.
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30+02:00",
			"valid":true,"requestIdentifier":"WAPIAAAAZ0001","name":"Example GmbH","address":"Musterstr. 1\n10115 Berlin"}`)
	}))
	defer registry.Close()

	svc, err := vies.NewService(vies.ServiceConfig{
		Syntax: splitPrefix,
		VIES: vies.NewVIES(vies.VIESConfig{
			BaseURL: registry.URL,
			// The requester's own number makes VIES return a requestIdentifier.
			RequesterCountry: "AT", RequesterNumber: "U13585627",
		}),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	r := svc.Check(ctx, "DE 136 695 976")
	fmt.Println(r.Status, r.Registry, r.CountryCode+r.Number, r.RequestIdentifier, r.RequestDate.Format(time.RFC3339))
	r = svc.Check(ctx, "DE136695976")
	fmt.Println(r.Status, "cached:", r.Cached)
	// Output:
	// valid VIES DE136695976 WAPIAAAAZ0001 2026-09-14T10:15:30+02:00
	// valid cached: true
}

func ExampleService_Check_outage() {
	// Germany's daily throttle, delivered as HTTP 200 like VIES does.
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"actionSucceed":false,"errorWrappers":[{"error":"MS_MAX_CONCURRENT_REQ"}]}`)
	}))
	defer registry.Close()

	svc, err := vies.NewService(vies.ServiceConfig{
		Syntax:      splitPrefix,
		VIES:        vies.NewVIES(vies.VIESConfig{BaseURL: registry.URL}),
		MaxAttempts: 2,
		Sleep:       func(context.Context, time.Duration) error { return nil }, // no real backoff in an example
	})
	if err != nil {
		panic(err)
	}
	r := svc.Check(context.Background(), "DE136695976")
	fmt.Println(r.Status, r.Fault, "attempts:", r.Attempts, "transient:", vies.Transient(r.Fault))
	// Output:
	// unavailable MS_MAX_CONCURRENT_REQ attempts: 2 transient: true
}

func ExampleVIESClient_Check() {
	// A stand-in for VIES: one number unknown, one member state throttled.
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ CountryCode, VATNumber string }
		json.NewDecoder(r.Body).Decode(&req)
		if req.CountryCode == "DE" {
			io.WriteString(w, `{"isValid":false,"userError":"MS_MAX_CONCURRENT_REQ","name":"---"}`)
			return
		}
		io.WriteString(w, `{"countryCode":"FR","vatNumber":"40303265045","requestDate":"2026-09-14T10:15:30+02:00","valid":false,"name":"---"}`)
	}))
	defer registry.Close()

	c := vies.NewVIES(vies.VIESConfig{BaseURL: registry.URL})
	for _, n := range [][2]string{{"FR", "40303265045"}, {"DE", "136695976"}} {
		r := c.Check(context.Background(), n[0], n[1])
		fmt.Println(r.CountryCode+r.Number, r.Status, r.Fault)
	}
	// Output:
	// FR40303265045 invalid INVALID
	// DE136695976 unavailable MS_MAX_CONCURRENT_REQ
}

func ExampleHMRCClient_Check() {
	// A stand-in for HMRC: the OAuth token endpoint and the v2 lookup.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"access_token":"t1","token_type":"bearer","expires_in":14400,"scope":"read:vat"}`)
	})
	mux.HandleFunc("GET /organisations/vat/check-vat-number/lookup/{target}/{requester}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"target":{"name":"Credite Sberger Donal Inc.","vatNumber":%q,
			"address":{"line1":"131B Barton Hamlet","postcode":"SW97 5CK","countryCode":"GB"}},
			"requester":%q,"consultationNumber":"ypAeKRPlW","processingDate":"2019-01-31T12:53:05+00:00"}`,
			r.PathValue("target"), r.PathValue("requester"))
	})
	registry := httptest.NewServer(mux)
	defer registry.Close()

	hmrc := vies.NewHMRC(vies.HMRCConfig{
		BaseURL:  registry.URL,
		ClientID: "client-id", ClientSecret: "client-secret",
		RequesterVRN: "GB146295999727",
	})
	r := hmrc.Check(context.Background(), "553557881")
	fmt.Println(r.Status, r.Registry, r.Name, r.RequestIdentifier)
	fmt.Println(strings.ReplaceAll(r.Address, "\n", ", "))
	// Output:
	// valid HMRC Credite Sberger Donal Inc. ypAeKRPlW
	// 131B Barton Hamlet, SW97 5CK, GB
}

func ExampleNew() {
	// Mode off (the zero Mode): no network, syntax still checked.
	svc, err := vies.New(vies.Config{Mode: vies.ModeOff, Service: vies.ServiceConfig{Syntax: splitPrefix}})
	if err != nil {
		panic(err)
	}
	r := svc.Check(context.Background(), "DE136695976")
	fmt.Println(r.Status, r.Fault)
	r = svc.Check(context.Background(), "D")
	fmt.Println(r.Status, r.Fault)
	// Output:
	// unavailable REGISTRY_OFF
	// invalid SYNTAX
}

func ExampleFake() {
	fake := vies.NewFake()
	fake.Set("DE136695976", vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES,
		CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-TEST-1"})

	var checker vies.Checker = fake // what the engine takes
	fmt.Println(checker.Check(context.Background(), "DE 136 695 976").Status)
	fmt.Println(checker.Check(context.Background(), "FR40303265045").Fault)
	fmt.Println(fake.Calls("DE136695976"))
	// Output:
	// valid
	// REGISTRY_OFF
	// 1
}

func ExampleResult() {
	// The JSON stored on the fiscal record as the registry proof.
	r := vies.Result{
		Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976",
		Name: "---", Address: "---", // DE does not disclose them
		RequestDate:       time.Date(2026, 9, 14, 10, 15, 30, 0, time.FixedZone("", 2*3600)),
		RequestIdentifier: "WAPIAAAAZ0001", Attempts: 1,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(r)
	// Output:
	// {
	//   "status": "valid",
	//   "registry": "VIES",
	//   "countryCode": "DE",
	//   "vatNumber": "136695976",
	//   "name": "---",
	//   "address": "---",
	//   "requestDate": "2026-09-14T10:15:30+02:00",
	//   "requestIdentifier": "WAPIAAAAZ0001",
	//   "attempts": 1
	// }
}

package httpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
)

// Example_discovery is what an agent does first: read the manifest, then
// check its corridor before sending anything. Both need no key.
func Example_discovery() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	engine, err := fiscal.New(fiscal.Config{Dir: dir, Rand: &detRand{seed: "example"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock: func() time.Time { return time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC) }})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	handler, err := httpserver.New(httpserver.Services{Engine: engine, Keys: &httpserver.Keys{}}, httpserver.Options{PublicURL: "https://fiscal.example.com", Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/.well-known/service.json")
	if err != nil {
		log.Fatal(err)
	}
	var manifest httpserver.Manifest
	if err := json.NewDecoder(resp.Body).Decode(&manifest); err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(manifest.Name, manifest.ProtocolVersion, manifest.TaxRulesetVersion, manifest.Custody)
	fmt.Println("chains:", manifest.SupportedChains)
	fmt.Println("openapi:", manifest.OpenAPI)

	resp, err = http.Post(srv.URL+"/v1/capabilities/check", "application/json", strings.NewReader(
		`{"seller_country":"US","buyer_country":"FR","supply_type":"digital_service","buyer_type":"B2C",
		  "payment":{"protocol":"x402","network":"eip155:8453","asset":"USDC"}}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var check catalog.CapabilityCheck
	if err := json.NewDecoder(resp.Body).Decode(&check); err != nil {
		log.Fatal(err)
	}
	fmt.Println("payment:", check.PaymentSupport.Status)
	fmt.Println("jurisdiction:", check.JurisdictionRepresentation.Status, check.JurisdictionRepresentation.Jurisdiction)
	cl := check.DeterminationCoverage.Classification
	fmt.Println("determination:", check.DeterminationCoverage.Status, cl.Regime, cl.Scheme, cl.RatePercent, cl.TaxingCountry)
	fmt.Println("receipt:", check.ReceiptEligibility.Status, check.ReceiptEligibility.Spec)
	// Output:
	// fiscal402 0.3.0 eu-vat-oss-2026.09 non_custodial
	// chains: [eip155:1 eip155:8453]
	// openapi: https://fiscal.example.com/openapi.json
	// payment: supported
	// jurisdiction: supported eu-vat
	// determination: determined OSS_B2C non-union 20 FR
	// receipt: eligible service.receipt/4.0.0
}

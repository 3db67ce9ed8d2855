package catalog_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// ExampleService_CheckCapabilities asks, before ingest, how the service
// would treat a sale by an Irish seller to a German consumer paid with USDC
// on Base. Each of the five aspects answers for itself.
func ExampleService_CheckCapabilities() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	engine, err := fiscal.New(fiscal.Config{
		Dir: dir, Rand: &fiscaltest.Rand{},
		Clock: func() time.Time { return time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	description := catalog.New(engine, catalog.DefaultPricing())

	c, err := description.CheckCapabilities(context.Background(), "", catalog.CapabilityCheckRequest{
		SellerCountry: "IE", BuyerCountry: "DE", SupplyType: "digital_service", BuyerType: "B2C",
		Payment: catalog.CheckPayment{Protocol: "x402", Network: "eip155:8453", Asset: "USDC"},
	})
	if err != nil {
		log.Fatal(err) // only malformed input is an error
	}
	fmt.Println("event:", c.EventSupport.Status)
	fmt.Println("payment:", c.PaymentSupport.Status, c.PaymentSupport.Chain.Name, c.PaymentSupport.Asset.Contract)
	fmt.Println("jurisdiction:", c.JurisdictionRepresentation.Status, c.JurisdictionRepresentation.RulesetVersion)
	d := c.DeterminationCoverage
	fmt.Println("determination:", d.Status, d.Classification.Regime, d.Classification.RatePercent, d.Classification.TaxingCountry)
	for _, alt := range d.Alternatives {
		fmt.Println("  if", alt.Assumption.Code+":", alt.Classification.Regime, alt.Classification.RatePercent, alt.Classification.TaxingCountry)
	}
	fmt.Println("receipt:", c.ReceiptEligibility.Status, c.ReceiptEligibility.Spec, c.ReceiptEligibility.ReviewStatus)
	// Output:
	// event: supported
	// payment: supported Base 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913
	// jurisdiction: supported eu-vat-oss-2026.09
	// determination: determined OSS_B2C 19 DE
	//   if seller_below_threshold: DOMESTIC 23 IE
	// receipt: eligible service.receipt/4.0.0 PROCESSED
}

// ExampleService_PricingPolicy prints the pricing policy in force: the same
// value whose fee every record accrues.
func ExampleService_PricingPolicy() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	engine, err := fiscal.New(fiscal.Config{Dir: dir, Rand: &fiscaltest.Rand{}})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	p := catalog.New(engine, catalog.DefaultPricing()).PricingPolicy()
	fmt.Println(p.Model, p.CurrentFeeBPS, p.Beta.Label)
	fmt.Println("standard:", p.Standard.FeeBPS, p.Standard.DisplayRate)
	fmt.Println("collection:", p.Collection.Method, "split of settlement:", p.Collection.SplitOfSettlement)
	fmt.Println("sandbox:", p.Sandbox.QuotaPerAgentPerDay, "per day at", p.Sandbox.Price, p.Sandbox.Currency)
	// Output:
	// basis_points 0 free_during_beta
	// standard: 50 0.5%
	// collection: policy_accrual split of settlement: false
	// sandbox: 10 per day at 0 EUR
}

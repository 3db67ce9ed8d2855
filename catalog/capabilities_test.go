package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// checkNow is inside the embedded ECB series (ends 2026-04-13), so a check
// "today" finds a rate; the tests that need a date past it say so.
var checkNow = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// env is an engine with its description.
type env struct {
	*fiscal.Engine
	*catalog.Service
}

// Settle records req in the books of the account.
func (e *env) Settle(ctx context.Context, account string, req fiscal.SettlementRequest, key string) (*fiscal.SettleResult, error) {
	b, err := e.Books(account)
	if err != nil {
		return nil, err
	}
	return b.Settle(ctx, req, key)
}

// decodeCheck decodes a check body as the HTTP layer does.
func decodeCheck(body string) (catalog.CapabilityCheckRequest, error) {
	var req catalog.CapabilityCheckRequest
	err := strictjson.Decode([]byte(body), &req)
	var se *strictjson.Error
	if errors.As(err, &se) {
		return req, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: se.Field, Detail: se.Detail}
	}
	return req, err
}

var irishSeller = fiscaltest.IrishSeller

func testEngine(t testing.TB, now time.Time, sellers ...fiscal.Seller) *env {
	t.Helper()
	e := fiscaltest.Engine(t, fiscaltest.Config(t, now, sellers...))
	return &env{e, catalog.New(e, catalog.DefaultPricing())}
}

func request(n int, amount, country, timestamp string) fiscal.SettlementRequest {
	return fiscaltest.Request(n, amount, country, timestamp)
}

// engineWithVIES is testEngine with a VAT-number registry configured.
func engineWithVIES(t *testing.T, now time.Time, sellers ...fiscal.Seller) *env {
	t.Helper()
	return engineWithChecker(t, now, vies.NewFake(), sellers...)
}

// engineWithChecker is testEngine with the given VAT-number checker.
func engineWithChecker(t *testing.T, now time.Time, checker vies.Checker, sellers ...fiscal.Seller) *env {
	t.Helper()
	cfg := fiscaltest.Config(t, now, sellers...)
	cfg.VIES = checker
	e := fiscaltest.Engine(t, cfg)
	return &env{e, catalog.New(e, catalog.DefaultPricing())}
}

var germanSellerBelowThreshold = fiscal.Seller{LegalName: "Klein GmbH", VATNumber: "DE136695976", LegalID: "HRB 1", Country: "DE",
	Address: fiscal.Address{Street: "Hauptstraße 1", City: "Berlin", PostalCode: "10115"}}

func check(seller, buyer, buyerType, protocol, network string) catalog.CapabilityCheckRequest {
	return catalog.CapabilityCheckRequest{SellerCountry: seller, BuyerCountry: buyer, SupplyType: "digital_service", BuyerType: buyerType,
		Payment: catalog.CheckPayment{Protocol: protocol, Network: network, Asset: "USDC"}}
}

func reasonCodes(rs []vat.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// TestCheckCapabilities checks each aspect of the corridors a user would ask
// about, and that the determination is the one the engine makes on ingest.
func TestCheckCapabilities(t *testing.T) {
	plain := testEngine(t, checkNow, irishSeller, germanSellerBelowThreshold)
	withVIES := engineWithVIES(t, checkNow, irishSeller)
	type want struct {
		event, payment, jurisdiction, determination, receipt string
		regime, taxing, rate, spec, review                   string
		reasons                                              []string // codes that must appear somewhere in the answer
		alternatives                                         int
	}
	cases := []struct {
		name    string
		engine  *env
		account string
		req     catalog.CapabilityCheckRequest
		want    want
	}{
		{"IE to DE consumer, x402 on Base", plain, "", check("IE", "DE", "B2C", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "determined", receipt: "eligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", spec: receipt.SpecV4, review: "PROCESSED", alternatives: 1,
				reasons: []string{catalog.AssumeSellerOverThreshold}}},
		{"account below threshold: origin taxation, no alternative", plain, "acct_1", check("DE", "FR", "B2C", "x402", "eip155:1"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "determined", receipt: "eligible",
				regime: "DOMESTIC", taxing: "DE", rate: "19", spec: receipt.SpecV4, review: "PROCESSED",
				reasons: []string{catalog.AssumeSellerProfile, vat.ReasonOriginTaxation}}},
		{"account of another country: settlements not usable", plain, "acct_0", check("FR", "DE", "B2C", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "determined", receipt: "eligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", spec: receipt.SpecV4, review: "PROCESSED", alternatives: 1,
				reasons: []string{catalog.ReasonSellerNotAccount}}},
		{"B2B without a registry: manual review", plain, "", check("IE", "DE", "B2B", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "manual_review", receipt: "eligible",
				spec: receipt.SpecV4, review: "PENDING_MANUAL_REVIEW",
				reasons: []string{vat.ReasonVATNumberUnverified, catalog.AssumeNoRegistry}}},
		{"B2B with a registry: reverse charge", withVIES, "", check("IE", "DE", "B2B", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "determined", receipt: "eligible",
				regime: "REVERSE_CHARGE_B2B", taxing: "DE", spec: receipt.SpecV4, review: "PROCESSED",
				reasons: []string{catalog.AssumeVATNumberConfirmed}}},
		{"Greek business buyer, prefix EL", withVIES, "", check("IE", "EL", "B2B", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "supported", determination: "determined", receipt: "eligible",
				regime: "REVERSE_CHARGE_B2B", taxing: "GR", spec: receipt.SpecV4, review: "PROCESSED"}},
		// A UK invoice states the VAT in sterling at a rate HMRC accepts,
		// which the ECB rate is not without the seller's agreement
		// (fiscal.Seller.UKRateAgreement): recorded, it waits for review.
		{"US seller to UK consumer: experimental UK VAT", plain, "", check("US", "GB", "B2C", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "experimental", determination: "determined", receipt: "experimental",
				regime: "UK_B2C", taxing: "GB", rate: "20", spec: receipt.SpecV4, review: "PENDING_MANUAL_REVIEW",
				reasons: []string{vat.ReasonRulesetExperimental, invoicelaw.ReasonNationalRateRequired}}},
		{"US to US: corridor not covered, manual review naming the governing law", plain, "", check("US", "US", "B2C", "x402", "eip155:8453"),
			want{event: "supported", payment: "supported", jurisdiction: "unsupported", determination: "manual_review", receipt: "eligible",
				spec: receipt.SpecV4, review: "PENDING_MANUAL_REVIEW",
				reasons: []string{vat.ReasonCorridorNotCovered}}},
		{"supply kind not covered", plain, "", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE", SupplyType: "consulting", Payment: catalog.CheckPayment{Protocol: "x402", Network: "eip155:8453"}},
			want{event: "supported", payment: "supported", jurisdiction: "unsupported", determination: "manual_review", receipt: "eligible",
				spec: receipt.SpecV4, review: "PENDING_MANUAL_REVIEW", reasons: []string{vat.ReasonSupplyKindNotCovered, catalog.ReasonCorridorUnresolved}}},
		{"planned protocol", plain, "", check("IE", "DE", "B2C", "mpp", ""),
			want{event: "supported", payment: "planned", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{"UNSUPPORTED_PROTOCOL", catalog.ReasonNoRecord}}},
		{"unknown protocol", plain, "", check("IE", "DE", "B2C", "lightning", "bip122:000000000019d6689c085ae165831e93"),
			want{event: "supported", payment: "unsupported", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{"UNSUPPORTED_PROTOCOL"}}},
		{"unsupported network", plain, "", check("IE", "DE", "B2C", "x402", "eip155:137"),
			want{event: "supported", payment: "unsupported", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{"UNSUPPORTED_NETWORK"}}},
		{"missing network", plain, "", check("IE", "DE", "B2C", "x402", ""),
			want{event: "supported", payment: "unsupported", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{catalog.ReasonNetworkMissing}}},
		{"unsupported asset", plain, "", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE", Payment: catalog.CheckPayment{Protocol: "x402", Network: "eip155:8453", Asset: "USDT"}},
			want{event: "supported", payment: "unsupported", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{"UNSUPPORTED_ASSET"}}},
		{"evm-transfer with an x402 scheme", plain, "", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE", Payment: catalog.CheckPayment{Protocol: "evm-transfer", Network: "eip155:1", Scheme: "exact"}},
			want{event: "supported", payment: "unsupported", jurisdiction: "supported", determination: "determined", receipt: "ineligible",
				regime: "OSS_B2C", taxing: "DE", rate: "19", alternatives: 1, reasons: []string{"UNSUPPORTED_SCHEME"}}},
		{"unknown buyer type", plain, "", check("IE", "DE", "B2G", "x402", "eip155:8453"),
			want{event: "unsupported", payment: "supported", jurisdiction: "unsupported", determination: "not_evaluated", receipt: "ineligible",
				reasons: []string{catalog.ReasonBuyerTypeUnknown}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.engine.CheckCapabilities(context.Background(), tc.account, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := want{event: c.EventSupport.Status, payment: c.PaymentSupport.Status, jurisdiction: c.JurisdictionRepresentation.Status,
				determination: c.DeterminationCoverage.Status, receipt: c.ReceiptEligibility.Status,
				spec: c.ReceiptEligibility.Spec, review: c.ReceiptEligibility.ReviewStatus, alternatives: len(c.DeterminationCoverage.Alternatives)}
			if cl := c.DeterminationCoverage.Classification; cl != nil && cl.Determined() {
				got.regime, got.taxing = cl.Regime, cl.TaxingCountry
				if cl.RatePercent != nil && cl.ChargesVAT() {
					got.rate = cl.RatePercent.String()
				}
			}
			w := tc.want
			w.reasons = nil
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			var all []string
			all = append(all, reasonCodes(c.EventSupport.Reasons)...)
			all = append(all, reasonCodes(c.PaymentSupport.Reasons)...)
			all = append(all, reasonCodes(c.JurisdictionRepresentation.Reasons)...)
			all = append(all, reasonCodes(c.DeterminationCoverage.Reasons)...)
			all = append(all, reasonCodes(c.DeterminationCoverage.Assumptions)...)
			all = append(all, reasonCodes(c.ReceiptEligibility.Reasons)...)
			for _, code := range tc.want.reasons {
				if !slices.Contains(all, code) {
					t.Errorf("reason %s missing; have %v", code, all)
				}
			}
			for _, code := range []string{vat.ReasonCheckDigitsDisagree, vat.ReasonRegistryProofIncomplete} {
				if slices.Contains(all, code) {
					t.Errorf("reason %s comes from the check's stand-in number and must not be shown", code)
				}
			}
			raw, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), `"supported":`) {
				t.Errorf("the answer has a global supported flag: %s", raw)
			}
		})
	}
}

// TestCheckMatchesIngest settles the corridors a check was asked about and
// compares: the check must predict the record's classification, review
// status and receipt version.
func TestCheckMatchesIngest(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	for i, buyer := range []string{"DE", "FR", "IE", "US", "GB", "CH", "EL", "ES"} {
		c, err := e.CheckCapabilities(context.Background(), "acct_0", check("IE", buyer, "B2C", "x402", "eip155:8453"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Settle(context.Background(), "acct_0", request(9000+i, "10.00", buyer, checkNow.Add(-time.Hour).Format(time.RFC3339)), "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		cl := c.DeterminationCoverage.Classification
		if cl.Regime != r.Classification.Regime || cl.TaxingCountry != r.Classification.TaxingCountry || cl.Category != r.Classification.Category || cl.Jurisdiction != r.Classification.Jurisdiction {
			t.Errorf("%s: check says %s/%s/%s/%s, the record %s/%s/%s/%s", buyer, cl.Regime, cl.TaxingCountry, cl.Category, cl.Jurisdiction,
				r.Classification.Regime, r.Classification.TaxingCountry, r.Classification.Category, r.Classification.Jurisdiction)
		}
		if c.ReceiptEligibility.ReviewStatus != r.ReviewStatus {
			t.Errorf("%s: check predicts %s, record is %s", buyer, c.ReceiptEligibility.ReviewStatus, r.ReviewStatus)
		}
		rcpt, err := e.Receipt(context.Background(), r.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		var doc receipt.Receipt
		if err := json.Unmarshal(rcpt, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Spec != c.ReceiptEligibility.Spec {
			t.Errorf("%s: check predicts receipt %s, got %s", buyer, c.ReceiptEligibility.Spec, doc.Spec)
		}
	}
}

// TestCheckFXUnavailable: a supply date after the last known ECB
// publication is predicted PENDING_MANUAL_REVIEW, as ingest records it.
func TestCheckFXUnavailable(t *testing.T) {
	e := testEngine(t, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), irishSeller)
	c, err := e.CheckCapabilities(context.Background(), "", check("IE", "DE", "B2C", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	re := c.ReceiptEligibility
	if re.Status != catalog.CheckEligible || re.ReviewStatus != fiscal.StatusPendingReview || re.Invoice || !slices.Contains(reasonCodes(re.Reasons), fiscal.ReasonFXRateUnavailable) {
		t.Errorf("receipt eligibility = %+v", re)
	}
	if c.DeterminationCoverage.Status != catalog.CheckDetermined {
		t.Errorf("the VAT is determined even without a rate: %+v", c.DeterminationCoverage)
	}
	c, err = e.CheckCapabilities(context.Background(), "", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE", SupplyDate: "2026-04-10", Payment: catalog.CheckPayment{Protocol: "x402", Network: "eip155:8453"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.ReceiptEligibility.ReviewStatus != fiscal.StatusProcessed || c.Corridor.SupplyDate != "2026-04-10" {
		t.Errorf("with supply_date inside the ECB series: %+v %s", c.ReceiptEligibility, c.Corridor.SupplyDate)
	}
}

func TestCheckCapabilitiesBadInput(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	cases := []struct {
		name, body, field string
	}{
		{"missing seller", `{"buyer_country":"DE","payment":{"protocol":"x402","network":"eip155:8453"}}`, "/seller_country"},
		{"missing buyer", `{"seller_country":"IE","payment":{"protocol":"x402","network":"eip155:8453"}}`, "/buyer_country"},
		{"country not ISO", `{"seller_country":"Ireland","buyer_country":"DE","payment":{"protocol":"x402"}}`, "/seller_country"},
		{"unassigned country", `{"seller_country":"IE","buyer_country":"XX","payment":{"protocol":"x402"}}`, "/buyer_country"},
		{"missing payment", `{"seller_country":"IE","buyer_country":"DE"}`, "/payment/protocol"},
		{"unknown field", `{"seller_country":"IE","buyer_country":"DE","sellerCountry":"IE","payment":{"protocol":"x402"}}`, "/sellerCountry"},
		{"unknown payment field", `{"seller_country":"IE","buyer_country":"DE","payment":{"protocol":"x402","amount":"1"}}`, "/payment/amount"},
		{"number for a string", `{"seller_country":"IE","buyer_country":"DE","payment":{"protocol":"x402","network":8453}}`, "/payment/network"},
		{"duplicate member", `{"seller_country":"IE","seller_country":"FR","buyer_country":"DE","payment":{"protocol":"x402"}}`, "/seller_country"},
		{"supply type not a token", `{"seller_country":"IE","buyer_country":"DE","supply_type":"Digital Service","payment":{"protocol":"x402"}}`, "/supply_type"},
		{"protocol with spaces", `{"seller_country":"IE","buyer_country":"DE","payment":{"protocol":"x 402"}}`, "/payment/protocol"},
		{"supply date in the future", `{"seller_country":"IE","buyer_country":"DE","supply_date":"2027-01-01","payment":{"protocol":"x402"}}`, "/supply_date"},
		{"supply date not a date", `{"seller_country":"IE","buyer_country":"DE","supply_date":"13/04/2026","payment":{"protocol":"x402"}}`, "/supply_date"},
		{"empty body", ``, ""},
		{"array", `[]`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decodeCheck(tc.body)
			if err == nil {
				_, err = e.CheckCapabilities(context.Background(), "", req)
			}
			var fe *fiscal.Error
			if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != tc.field {
				t.Fatalf("err = %v, want BAD_REQUEST at %q", err, tc.field)
			}
		})
	}
	if _, err := e.CheckCapabilities(context.Background(), "acct_nobody", check("IE", "DE", "B2C", "x402", "eip155:8453")); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Errorf("unknown account: %v", err)
	}
}

// TestTablesDriveBehaviour ties the published tables to what the engine
// does: the networks and assets it accepts, the receipt version per
// jurisdiction, the supply types it determines, the displayed fee.
func TestTablesDriveBehaviour(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	for i, a := range catalog.SupportedAssets() {
		req := request(100+i, "1.00", "DE", "2026-04-10T12:00:00Z")
		req.Network, req.Asset = a.Network, a.Contract
		if _, err := e.Settle(context.Background(), "acct_0", req, ""); err != nil {
			t.Errorf("published asset %s on %s is refused: %v", a.Contract, a.Network, err)
		}
	}
	req := request(200, "1.00", "DE", "2026-04-10T12:00:00Z")
	req.Network = "eip155:137"
	if _, err := e.Settle(context.Background(), "acct_0", req, ""); fiscaltest.Code(err) != fiscal.CodeUnsupportedNetwork {
		t.Errorf("an unpublished network is accepted: %v", err)
	}
	if got := catalog.SupportedNetworks(); !slices.Equal(got, []string{evmverify.NetworkEthereum, evmverify.NetworkBase}) {
		t.Errorf("networks = %v", got)
	}

	versions := catalog.ReceiptVersions()
	for _, j := range catalog.Jurisdictions() {
		v, ok := versions[j.DefaultReceiptVersion]
		if !ok || !slices.Contains(v.DefaultFor, j.ID) {
			t.Errorf("jurisdiction %s: default receipt %s not in receipt_versions %+v", j.ID, j.DefaultReceiptVersion, versions)
		}
	}
	// A UK consumer's record is signed with the version the table gives uk-vat.
	res, err := e.Settle(context.Background(), "acct_0", request(300, "5.00", "GB", "2026-04-10T12:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := e.Receipt(context.Background(), res.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	var doc receipt.Receipt
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if want := "service.receipt/" + catalog.Jurisdictions()[1].DefaultReceiptVersion; doc.Spec != want || res.Record.Classification.Jurisdiction != "uk-vat" {
		t.Errorf("UK record receipt spec %s (jurisdiction %s), want %s", doc.Spec, res.Record.Classification.Jurisdiction, want)
	}

	for _, kind := range catalog.SupplyTypes() {
		d := vat.Determine(vat.Input{Seller: vat.Seller{Country: "IE", OverThreshold: true}, Buyer: vat.Buyer{Country: "NL"}, Supply: vat.Supply{Kind: kind, Date: checkNow}})
		if slices.Contains(reasonCodes(d.Reasons), vat.ReasonSupplyKindNotCovered) {
			t.Errorf("published supply type %s is not covered by vat.Determine", kind)
		}
	}

	for bps, want := range map[int64]string{0: "0%", 1: "0.01%", 50: "0.5%", 100: "1%", 125: "1.25%"} {
		if got := catalog.DisplayRate(bps); got != want {
			t.Errorf("DisplayRate(%d) = %q, want %q", bps, got, want)
		}
	}
	// The fee on a record is the published current fee.
	res, err = e.Settle(context.Background(), "acct_0", request(400, "100.00", "DE", "2026-04-10T12:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	pub := e.PricingPolicy()
	if res.Record.Fee == nil || res.Record.Fee.BPS != "0" || pub.CurrentFeeBPS != 0 || res.Record.Fee.Label != pub.Beta.Label || res.Record.Fee.Collection != pub.Collection.Method {
		t.Errorf("record fee %+v vs published %+v", res.Record.Fee, pub)
	}
}

func TestCapabilitiesFollowConfiguration(t *testing.T) {
	tokens := []string{"vat_classification", "vies_lookup", "oss_b2c", "reverse_charge_b2b", "ubl_2_1", "historical_fx", "audit_ledger", "signed_webhooks", "signed_receipt", "sandbox_simulate"}
	var all []string
	for _, c := range testEngine(t, checkNow, irishSeller).Capabilities() {
		all = append(all, c.Token)
		if c.Description == "" || c.Name == "" {
			t.Errorf("%s has no name or description", c.Token)
		}
	}
	if !slices.Equal(all, tokens) {
		t.Errorf("tokens = %v, want the ten published tokens %v", all, tokens)
	}
	plain := testEngine(t, checkNow, irishSeller).AvailableCapabilities()
	if slices.Contains(plain, "vies_lookup") || slices.Contains(plain, "reverse_charge_b2b") || len(plain) != len(tokens)-2 {
		t.Errorf("without a registry: %v", plain)
	}
	if got := engineWithVIES(t, checkNow, irishSeller).AvailableCapabilities(); !slices.Equal(got, tokens) {
		t.Errorf("with a registry: %v", got)
	}

	// The bundled server's -vies off: a vies.Service whose lookups are off
	// is configured, but confirms nothing.
	off, err := vies.New(vies.Config{Mode: vies.ModeOff, Service: vies.ServiceConfig{Syntax: vat.Syntax}})
	if err != nil {
		t.Fatal(err)
	}
	offEngine := engineWithChecker(t, checkNow, off, irishSeller)
	if got := offEngine.AvailableCapabilities(); slices.Contains(got, "vies_lookup") || slices.Contains(got, "reverse_charge_b2b") {
		t.Errorf("with lookups off: %v", got)
	}
	c, err := offEngine.CheckCapabilities(context.Background(), "", check("IE", "DE", "B2B", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DeterminationCoverage.Status != catalog.CheckManualReview || !slices.Contains(reasonCodes(c.DeterminationCoverage.Assumptions), catalog.AssumeNoRegistry) {
		t.Errorf("B2B check with lookups off: %+v", c.DeterminationCoverage)
	}
	// -vies live without HMRC credentials: VIES answers, GB numbers do not.
	live, err := vies.New(vies.Config{Mode: vies.ModeLive, VIES: vies.VIESConfig{BaseURL: "http://127.0.0.1:1"}, Service: vies.ServiceConfig{Syntax: vat.Syntax}})
	if err != nil {
		t.Fatal(err)
	}
	liveEngine := engineWithChecker(t, checkNow, live, irishSeller)
	if got := liveEngine.AvailableCapabilities(); !slices.Equal(got, tokens) {
		t.Errorf("with VIES live: %v", got)
	}
	for _, cp := range liveEngine.Capabilities() {
		if cp.Token == "vies_lookup" && (len(cp.Reasons) != 1 || !strings.Contains(cp.Reasons[0].Detail, "GB numbers")) {
			t.Errorf("vies_lookup without HMRC: %+v", cp)
		}
	}
	c, err = liveEngine.CheckCapabilities(context.Background(), "", check("US", "GB", "B2B", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DeterminationCoverage.Status != catalog.CheckManualReview {
		t.Errorf("UK B2B without HMRC: %+v", c.DeterminationCoverage)
	}
}

func TestCatalog(t *testing.T) {
	c := testEngine(t, checkNow, irishSeller).Catalog()
	if c.APIVersion != "0.3.0" || c.Category != "eu_fiscal_compliance" || c.Custody != "non_custodial" {
		t.Errorf("identity: %+v", c)
	}
	if c.FX.RatesThrough != "2026-04-13" || c.FX.RatesFrom != "1999-01-04" {
		t.Errorf("fx coverage %s..%s", c.FX.RatesFrom, c.FX.RatesThrough)
	}
	if c.RateTable.Version == "" || c.RateTable.CoverageFrom == "" {
		t.Errorf("rate table %+v", c.RateTable)
	}
	for _, ch := range c.Chains {
		if ch.Verification != "off" || ch.Name == "" {
			t.Errorf("chain %+v", ch)
		}
	}
	// The embedded table's version (vat-rates-YYYY.MM.n) names the month it
	// last changed; no ruleset is newer.
	_, month, _ := strings.Cut(vat.Rates().Version(), "vat-rates-")
	want, err := time.Parse("2006.01", month[:7])
	if err != nil {
		t.Fatal(err)
	}
	if got := testEngine(t, checkNow, irishSeller).DescriptionDate(); !got.Equal(want) {
		t.Errorf("DescriptionDate = %v, want %v (the embedded table %s)", got, want, vat.Rates().Version())
	}
}

// TestDescriptionDateOfLoadedTable: the manifest's updated_at follows the
// table the engine decides with, not the embedded one: an operator's table
// for the next year moves it to that table's month.
func TestDescriptionDateOfLoadedTable(t *testing.T) {
	_, to := vat.Rates().Coverage()
	next := to.AddDate(0, 0, 1) // the first day after the embedded coverage
	b := fiscaltest.RateTableFile(t, func(d map[string]any) {
		d["version"] = "acme-vat-rates-" + next.Format("2006.01") + ".1"
		cov := d["coverage"].(map[string]any)
		cov["to"] = next.AddDate(1, 0, -1).Format(time.DateOnly)
		cov["why"] = "test fixture: the embedded rows carried one more year"
	})
	tbl, err := vat.ParseRateTable(b)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, checkNow, irishSeller)
	cfg.Rates = tbl
	svc := catalog.New(fiscaltest.Engine(t, cfg), catalog.DefaultPricing())
	if got, want := svc.DescriptionDate(), time.Date(next.Year(), next.Month(), 1, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("DescriptionDate with table %s = %v, want %v", tbl.Version(), got, want)
	}
}

// FuzzCapabilityCheck feeds arbitrary bodies to the decoder and the check:
// never a panic; every rejection is a BAD_REQUEST whose field is empty or a
// JSON pointer; every answer has all five aspects with a status.
func FuzzCapabilityCheck(f *testing.F) {
	for _, s := range []string{
		`{"seller_country":"IE","buyer_country":"DE","supply_type":"digital_service","buyer_type":"B2C","payment":{"protocol":"x402","network":"eip155:8453","asset":"USDC"}}`,
		`{"seller_country":"US","buyer_country":"GB","buyer_type":"B2B","payment":{"protocol":"evm-transfer","network":"eip155:1","scheme":"erc20-transfer"}}`,
		`{"seller_country":"el","buyer_country":"xi","supply_date":"2026-01-02","payment":{"protocol":"mpp"}}`,
		`{"seller_country":"IE","buyer_country":"IC","payment":{"protocol":"x402","network":"eip155:8453","asset":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"}}`,
		`{"payment":{"protocol":"x402","extra":{"a":[1,{"b":2}]}}}`,
		`[1,2]`, `"x"`, `{"seller_country":"IE"`,
	} {
		f.Add([]byte(s))
	}
	e := testEngine(f, checkNow, irishSeller)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeCheck(string(body))
		var c *catalog.CapabilityCheck
		if err == nil {
			c, err = e.CheckCapabilities(context.Background(), "", req)
		}
		if err != nil {
			var fe *fiscal.Error
			if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest {
				t.Fatalf("error %v is not a BAD_REQUEST", err)
			}
			if fe.Field != "" && !strings.HasPrefix(fe.Field, "/") {
				t.Fatalf("field %q is not a JSON pointer", fe.Field)
			}
			return
		}
		for _, s := range []string{c.EventSupport.Status, c.PaymentSupport.Status, c.JurisdictionRepresentation.Status, c.DeterminationCoverage.Status, c.ReceiptEligibility.Status} {
			if s == "" {
				t.Fatalf("an aspect has no status: %+v", c)
			}
		}
	})
}

// TestSettleWithRegistryOff: a registry that gives no answer (vies.Fake
// without one, lookups switched off) leaves a B2B claim pending review; the
// record is written with its receipt, not refused with a 500.
func TestSettleWithRegistryOff(t *testing.T) {
	e := engineWithVIES(t, checkNow, irishSeller)
	req := request(77, "11.90", "DE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = "DE136695976"
	res, err := e.Settle(context.Background(), "acct_0", req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasonCodes(res.Record.ReviewReasons), vat.ReasonVATNumberUnverified) {
		t.Errorf("record %s %v", res.Record.ReviewStatus, res.Record.ReviewReasons)
	}
	if _, err := e.Receipt(context.Background(), res.Record.Receipt.ID); err != nil {
		t.Error(err)
	}
}

// TestCheckFollowsTheSellersFXPolicy: with a key, the check predicts with
// the account's own Art. 91(2) reading (seller.fxPolicy), as recording
// does. A seller that converts at "the rate of the day" and checks a sale
// of today, before the ECB has published today's rate, gets a record
// pending review (fx_rate_unavailable); the check must say so, not
// predict PROCESSED from the engine's default policy, under which the
// previous publication applies.
func TestCheckFollowsTheSellersFXPolicy(t *testing.T) {
	now := time.Date(2026, 4, 14, 12, 0, 0, 0, time.UTC) // the embedded series ends on 2026-04-13
	seller := irishSeller
	seller.FXPolicy = fx.ForDayOrPrevious
	e := testEngine(t, now, seller)
	c, err := e.CheckCapabilities(context.Background(), "acct_0", check("IE", "DE", "B2C", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Settle(context.Background(), "acct_0", request(9100, "10.00", "DE", now.Add(-time.Minute).Format(time.RFC3339)), "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if r.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("the record is %s, want it waiting for the rate of the day", r.ReviewStatus)
	}
	re := c.ReceiptEligibility
	if re.ReviewStatus != r.ReviewStatus || !slices.Contains(reasonCodes(re.Reasons), fiscal.ReasonFXRateUnavailable) {
		t.Errorf("check predicts %s %v, the record is %s %v", re.ReviewStatus, reasonCodes(re.Reasons), r.ReviewStatus, reasonCodes(r.ReviewReasons))
	}
}

// TestCheckAccountSellerUsesRunningTotals: with a key, the check decides
// the account's own sale as recording does, on the account's Art. 59c
// running totals (opening figures plus counted sales), not on its
// OverThreshold flag alone. An Irish account already over EUR 10,000 in
// 2026 is taxed in Germany for a German consumer (Art. 59c(1)(c), (2)
// Directive 2006/112/EC); a check predicting Irish VAT would be wrong.
func TestCheckAccountSellerUsesRunningTotals(t *testing.T) {
	seller := irishSeller
	seller.OverThreshold = false
	seller.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "12000"}}
	e := testEngine(t, checkNow, seller)
	c, err := e.CheckCapabilities(context.Background(), "acct_0", check("IE", "DE", "B2C", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Settle(context.Background(), "acct_0", request(500, "10.00", "DE", checkNow.Add(-time.Hour).Format(time.RFC3339)), "")
	if err != nil {
		t.Fatal(err)
	}
	got, want := c.DeterminationCoverage.Classification, res.Record.Classification
	if got == nil || got.Status != want.Status || got.Regime != want.Regime || got.TaxingCountry != want.TaxingCountry {
		t.Fatalf("check %+v, recorded %s %s %s", got, want.Status, want.Regime, want.TaxingCountry)
	}
	if want.TaxingCountry != "DE" {
		t.Errorf("recorded in %s, want DE", want.TaxingCountry)
	}
}

// TestCheckB2BStatesTheAddressCondition: a reverse-charge invoice must
// state the customer's full name and address (Art. 226(5) Directive
// 2006/112/EC); a business sale recorded without them, from the request
// or the registry (VIES does not disclose German addresses), waits for
// review (buyer_address_missing). A check that predicts PROCESSED for a
// B2B corridor must say it assumes them.
func TestCheckB2BStatesTheAddressCondition(t *testing.T) {
	checker := vies.NewFake()
	e := engineWithChecker(t, checkNow, checker, irishSeller)
	c, err := e.CheckCapabilities(context.Background(), "acct_0", check("IE", "DE", "B2B", "x402", "eip155:8453"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReceiptEligibility.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("check predicts %s %v", c.ReceiptEligibility.ReviewStatus, c.ReceiptEligibility.Reasons)
	}
	req := request(600, "10.00", "DE", checkNow.Add(-time.Hour).Format(time.RFC3339))
	req.ConsumerVATNumber = "DE136695976"
	checker.Set(req.ConsumerVATNumber, vies.Result{Status: vies.StatusValid, Registry: "VIES", CountryCode: "DE", Number: "136695976",
		Name: "---", Address: "---", RequestDate: checkNow})
	res, err := e.Settle(context.Background(), "acct_0", req, "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if !slices.ContainsFunc(r.ReviewReasons, func(x vat.Reason) bool { return x.Code == invoicelaw.ReasonBuyerAddressMissing }) {
		t.Fatalf("recorded %s %v", r.ReviewStatus, r.ReviewReasons)
	}
	if !slices.Contains(reasonCodes(c.DeterminationCoverage.Assumptions), catalog.AssumeBuyerNameAddress) {
		t.Errorf("the check predicts PROCESSED, the record is %s (%s), and no assumption names the customer's name and address: %v",
			r.ReviewStatus, invoicelaw.ReasonBuyerAddressMissing, reasonCodes(c.DeterminationCoverage.Assumptions))
	}
}

// TestCheckRateOfTheDayIsTheLocalDay: under the "rate of the day"
// (seller.fxPolicy for-day-or-previous; Art. 91(2) third subparagraph
// Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// recording converts at the publication of the supply's calendar day in
// the taxing state (fx.RateOfTheDay), not of the payment's UTC date. A sale
// at 23:30 UTC on 13 April 2026, the last embedded publication day, to a
// consumer in Finland is on 14 April in Helsinki, whose rate is not out:
// the record waits (fx_rate_unavailable), and the check must predict that,
// not PROCESSED on the 13 April rate.
func TestCheckRateOfTheDayIsTheLocalDay(t *testing.T) {
	now := time.Date(2026, 4, 13, 23, 45, 0, 0, time.UTC)
	seller := irishSeller
	seller.FXPolicy = fx.ForDayOrPrevious
	e := testEngine(t, now, seller)
	at := "2026-04-13T23:30:00Z"
	req := check("IE", "FI", "B2C", "x402", "eip155:8453")
	req.SupplyDate = at
	c, err := e.CheckCapabilities(context.Background(), "acct_0", req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Settle(context.Background(), "acct_0", request(9150, "10.00", "FI", at), "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasonCodes(r.ReviewReasons), fiscal.ReasonFXRateUnavailable) || r.Classification.SupplyDate != "2026-04-14" {
		t.Fatalf("the record is %s %v (supply date %s), want it waiting for the rate of 14 April", r.ReviewStatus, reasonCodes(r.ReviewReasons), r.Classification.SupplyDate)
	}
	re := c.ReceiptEligibility
	if re.ReviewStatus != r.ReviewStatus || !slices.Contains(reasonCodes(re.Reasons), fiscal.ReasonFXRateUnavailable) {
		t.Errorf("check predicts %s %v, the record is %s %v", re.ReviewStatus, reasonCodes(re.Reasons), r.ReviewStatus, reasonCodes(r.ReviewReasons))
	}
}

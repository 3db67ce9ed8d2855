package catalog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestCheckTransferNeedsChainVerification: a plain USDC transfer
// (evm-transfer) is recorded from the chain only (ingest.RecordTransfer),
// which this engine refuses while the network's chain verification is off
// (CHAIN_VERIFICATION_REQUIRED). The check must not call such a payment
// supported and its receipt eligible: nothing would be recorded.
func TestCheckTransferNeedsChainVerification(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller) // no chain verification
	c, err := e.CheckCapabilities(context.Background(), "acct_0", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE",
		Payment: catalog.CheckPayment{Protocol: catalog.ProtocolEVMTransfer, Network: "eip155:8453"}})
	if err != nil {
		t.Fatal(err)
	}
	payments, err := ingest.Open(e.Engine, ingest.Options{NoQueue: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = payments.RecordTransfer(context.Background(), ingest.Transfer{
		Account: "acct_0", Network: "eip155:8453", TxHash: fiscaltest.TxHash(1), Buyer: fiscal.BuyerFacts{Country: "DE"}})
	if fiscaltest.Code(err) != fiscal.CodeChainVerifyRequired {
		t.Fatalf("recording the transfer: %v, want %s", err, fiscal.CodeChainVerifyRequired)
	}
	ps := c.PaymentSupport
	if ps.Status == catalog.CheckSupported || !slices.Contains(reasonCodes(ps.Reasons), string(fiscal.CodeChainVerifyRequired)) {
		t.Errorf("payment_support %s %v, want unsupported with %s", ps.Status, reasonCodes(ps.Reasons), fiscal.CodeChainVerifyRequired)
	}
	if c.ReceiptEligibility.Status != catalog.CheckIneligible {
		t.Errorf("receipt_eligibility %s, want ineligible: no record is made", c.ReceiptEligibility.Status)
	}
}

// TestCheckTransferWithChainVerification: with the network's verification
// required, a plain transfer is supported.
func TestCheckTransferWithChainVerification(t *testing.T) {
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{"http://127.0.0.1:1"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, checkNow, irishSeller)
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	c, err := catalog.New(e, catalog.DefaultPricing()).CheckCapabilities(context.Background(), "", catalog.CapabilityCheckRequest{SellerCountry: "IE", BuyerCountry: "DE",
		Payment: catalog.CheckPayment{Protocol: catalog.ProtocolEVMTransfer, Network: evmverify.NetworkBase}})
	if err != nil {
		t.Fatal(err)
	}
	if c.PaymentSupport.Status != catalog.CheckSupported || c.ReceiptEligibility.Status != catalog.CheckEligible {
		t.Errorf("payment_support %s %v, receipt %s", c.PaymentSupport.Status, c.PaymentSupport.Reasons, c.ReceiptEligibility.Status)
	}
}

// TestCheckInvoiceFollowsInvoicingMode: receipt_eligibility.invoice says
// whether a UBL invoice is bound to the record. An account invoicing
// none_b2c issues none for a B2C OSS sale where its member state of
// identification needs none (Art. 219a(2)(b), 220(1) Directive
// 2006/112/EC; Ireland: VATCA 2010 s. 66(1)(a)), and one invoicing
// summary_monthly covers it by the month's summary invoice (Art. 223);
// the check must not promise an invoice of its own.
func TestCheckInvoiceFollowsInvoicingMode(t *testing.T) {
	for i, mode := range []string{fiscal.InvoicingNoneB2C, fiscal.InvoicingSummaryMonthly, fiscal.InvoicingPerPayment} {
		seller := irishSeller
		seller.Invoicing = mode
		e := testEngine(t, checkNow, seller)
		c, err := e.CheckCapabilities(context.Background(), "acct_0", check("IE", "DE", "B2C", "x402", "eip155:8453"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Settle(context.Background(), "acct_0", request(700+i, "10.00", "DE", checkNow.Add(-time.Hour).Format(time.RFC3339)), "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if c.ReceiptEligibility.ReviewStatus != r.ReviewStatus || c.ReceiptEligibility.Invoice != (r.Invoice != nil) {
			t.Errorf("%s: check predicts %s, invoice %t; recorded %s, invoice %t (%+v)", mode, c.ReceiptEligibility.ReviewStatus, c.ReceiptEligibility.Invoice,
				r.ReviewStatus, r.Invoice != nil, r.Invoicing)
		}
	}
}

// TestCheckTransferListsItsOwnIngest: the ingest routes of a plain
// transfer's check are the ones that record a plain transfer. POST
// /settlements (and POST /v1/fiscal-events, from the same settlement
// fields) record every payment as x402 "exact", so they are no route for
// evm-transfer; the library's ingest.Service.RecordTransfer is, under the
// same seller condition as the account's settlements. An x402 check keeps
// its HTTP routes.
func TestCheckTransferListsItsOwnIngest(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	ctx := context.Background()
	res, err := e.Settle(ctx, "acct_0", request(1, "1.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Record.Settlement.Protocol; p == catalog.ProtocolEVMTransfer {
		t.Fatalf("POST /settlements recorded protocol %q", p)
	}
	endpoints := func(c *catalog.CapabilityCheck) []string {
		var out []string
		for _, r := range c.EventSupport.Ingest {
			out = append(out, r.Endpoint)
		}
		return out
	}
	tr, err := e.CheckCapabilities(ctx, "acct_0", check("IE", "DE", "B2C", catalog.ProtocolEVMTransfer, evmverify.NetworkBase))
	if err != nil {
		t.Fatal(err)
	}
	got := endpoints(tr)
	if slices.Contains(got, "POST /settlements") || slices.Contains(got, "POST /v1/fiscal-events") || !slices.Contains(got, catalog.RouteRecordTransfer) {
		t.Errorf("evm-transfer ingest routes %v, want %s only", got, catalog.RouteRecordTransfer)
	}
	for _, r := range tr.EventSupport.Ingest {
		if r.Endpoint == catalog.RouteRecordTransfer && r.Status != catalog.RouteUsable {
			t.Errorf("the account's own transfer: %+v, want usable", r)
		}
	}
	x, err := e.CheckCapabilities(ctx, "acct_0", check("IE", "DE", "B2C", catalog.ProtocolX402, evmverify.NetworkBase))
	if err != nil {
		t.Fatal(err)
	}
	if got := endpoints(x); !slices.Contains(got, "POST /settlements") || slices.Contains(got, catalog.RouteRecordTransfer) {
		t.Errorf("x402 ingest routes %v", got)
	}
}

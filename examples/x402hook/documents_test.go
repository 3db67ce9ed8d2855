package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/x402"
)

// TestSDKContextDocumentsParse: the documents the example hands its hook
// must be ones x402.Parse accepts, so that the example runs without a
// chain test failing first (TestRun needs anvil and skips without it).
func TestSDKContextDocumentsParse(t *testing.T) {
	o := options{network: "eip155:8453", tx: "0x" + strings.Repeat("ab", 32),
		payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", payTo: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", amount: "1190000"}
	c, err := sdkContext(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	settle, err := json.Marshal(c.Result)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := x402.Parse(x402.Settlement{SettleResponse: settle, PaymentRequirements: c.RequirementsBytes, PaymentPayload: c.PayloadBytes})
	if err != nil {
		t.Fatalf("the example's documents are refused: %v", err)
	}
	if p.Payer != strings.ToLower(o.payer) || p.AmountAtomic != o.amount {
		t.Fatalf("payment %+v", p)
	}
}

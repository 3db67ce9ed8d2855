package ingest_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
)

// TestX402Validation: every fault in the x402 documents or the buyer facts
// is answered before the chain is asked (the engine's RPC endpoint is a
// closed port: a case that reached it would be CHAIN_UNAVAILABLE), with the
// code and JSON pointer a caller can act on.
func TestX402Validation(t *testing.T) {
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(t, "http://127.0.0.1:1", evmverify.Policy{Timeout: time.Second}, clock)
	const (
		tx    = "0x2f1c0000000000000000000000000000000000000000000000000000000a3344"
		payer = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
		payTo = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
	)
	type docs struct {
		settle, req, payload map[string]any
		buyer                fiscal.BuyerFacts
		key, account         string
		raw                  [3]string // when set, sent instead of the maps
	}
	base := func() *docs {
		req := map[string]any{
			"scheme": "exact", "network": "eip155:8453", "amount": "1500000",
			"asset": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "payTo": payTo, "maxTimeoutSeconds": 60,
			"extra": map[string]any{"name": "USD Coin", "version": "2"},
		}
		acc := map[string]any{}
		for k, v := range req {
			acc[k] = v
		}
		return &docs{
			settle: map[string]any{"success": true, "payer": payer, "transaction": tx, "network": "eip155:8453"},
			req:    req,
			payload: map[string]any{"x402Version": 2, "accepted": acc, "resource": map[string]any{"url": "https://api.example.com/x"},
				"payload": map[string]any{"signature": "0xab", "authorization": map[string]any{"from": payer, "to": payTo, "value": "1500000", "validAfter": "1740672089", "validBefore": "1740672154", "nonce": "0x" + strings.Repeat("11", 32)}}},
			buyer:   buyerDE,
			account: "acct_0",
		}
	}
	inner := func(d *docs) map[string]any { return d.payload["payload"].(map[string]any) }
	auth := func(d *docs) map[string]any { return inner(d)["authorization"].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(d *docs)
		code   fiscal.Code
		field  string
	}{
		{"valid documents reach the chain", func(d *docs) {}, fiscal.CodeChainUnavailable, ""},
		{"unknown members are ignored", func(d *docs) {
			d.settle["extensions"] = map[string]any{"offer-receipt": map[string]any{"x": 1}}
			d.settle["requirements"] = d.req
			d.req["futureField"] = []any{1, 2}
		}, fiscal.CodeChainUnavailable, ""},
		{"no settle response", func(d *docs) { d.settle = nil }, fiscal.CodeBadRequest, "/settleResponse"},
		{"no success member", func(d *docs) { delete(d.settle, "success") }, fiscal.CodeBadRequest, "/settleResponse/success"},
		{"success false", func(d *docs) { d.settle["success"] = false; d.settle["errorReason"] = "invalid_signature" }, ingest.CodeNotSettled, "/settleResponse/success"},
		{"pending without transaction", func(d *docs) {
			d.settle["success"] = false
			d.settle["errorReason"] = "settlement_pending"
			d.settle["transaction"] = ""
		}, ingest.CodeNotSettled, "/settleResponse/success"},
		{"success as a string", func(d *docs) { d.settle["success"] = "true" }, fiscal.CodeBadRequest, "/settleResponse/success"},
		{"no transaction", func(d *docs) { d.settle["transaction"] = "" }, fiscal.CodeBadRequest, "/settleResponse/transaction"},
		{"short transaction", func(d *docs) { d.settle["transaction"] = tx[:65] }, fiscal.CodeBadRequest, "/settleResponse/transaction"},
		{"scheme upto", func(d *docs) { d.req["scheme"] = "upto" }, fiscal.CodeUnsupportedScheme, "/paymentRequirements/scheme"},
		{"no scheme", func(d *docs) { delete(d.req, "scheme") }, fiscal.CodeBadRequest, "/paymentRequirements/scheme"},
		{"optimism", func(d *docs) { d.req["network"] = "eip155:10" }, fiscal.CodeUnsupportedNetwork, "/paymentRequirements/network"},
		{"v1 testnet name", func(d *docs) {
			delete(d.req, "amount")
			d.req["network"], d.req["maxAmountRequired"], d.settle["network"] = "base-sepolia", "1500000", "base-sepolia"
			d.payload = map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia", "payload": inner(d)}
		}, fiscal.CodeUnsupportedNetwork, "/paymentRequirements/network"},
		{"v1 name in v2 documents", func(d *docs) { d.req["network"] = "base-sepolia" }, fiscal.CodeBadRequest, "/paymentRequirements/network"},
		{"settle names another network", func(d *docs) { d.settle["network"] = "eip155:1" }, fiscal.CodeBadRequest, "/settleResponse/network"},
		{"accepted names another network", func(d *docs) {
			d.payload["accepted"].(map[string]any)["network"] = "ethereum"
		}, fiscal.CodeBadRequest, "/paymentPayload/accepted/network"},
		{"accepted names another payTo", func(d *docs) {
			d.payload["accepted"].(map[string]any)["payTo"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
		}, fiscal.CodeBadRequest, "/paymentPayload/accepted/payTo"},
		{"accepted names scheme upto", func(d *docs) {
			d.payload["accepted"].(map[string]any)["scheme"] = "upto"
		}, fiscal.CodeBadRequest, "/paymentPayload/accepted/scheme"},
		{"settled amount is not the required amount", func(d *docs) { d.settle["amount"] = "1"; d.payload = nil }, fiscal.CodeBadRequest, "/settleResponse/amount"},
		{"another token", func(d *docs) { d.req["asset"] = "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512" }, fiscal.CodeUnsupportedAsset, "/paymentRequirements/asset"},
		{"Base Sepolia USDC", func(d *docs) { d.req["asset"] = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }, fiscal.CodeUnsupportedAsset, "/paymentRequirements/asset"},
		{"Ethereum USDC on Base", func(d *docs) { d.req["asset"] = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" }, fiscal.CodeUnsupportedAsset, "/paymentRequirements/asset"},
		{"no asset", func(d *docs) { delete(d.req, "asset") }, fiscal.CodeBadRequest, "/paymentRequirements/asset"},
		{"decimal amount", func(d *docs) { d.req["amount"] = "1.5" }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"zero amount", func(d *docs) { d.req["amount"] = "0" }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"leading zero", func(d *docs) { d.req["amount"] = "01500000" }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"negative amount", func(d *docs) { d.req["amount"] = "-1" }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"amount as a JSON number", func(d *docs) { d.req["amount"] = 1500000 }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"amount too large", func(d *docs) { d.req["amount"] = strings.Repeat("9", 19) }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"no amount", func(d *docs) { delete(d.req, "amount") }, fiscal.CodeBadRequest, "/paymentRequirements/amount"},
		{"two amounts", func(d *docs) { d.req["maxAmountRequired"] = "1500001" }, fiscal.CodeBadRequest, "/paymentRequirements/maxAmountRequired"},
		{"bad settled amount", func(d *docs) { d.settle["amount"] = "1e6" }, fiscal.CodeBadRequest, "/settleResponse/amount"},
		{"bad payTo", func(d *docs) { d.req["payTo"] = "merchant" }, fiscal.CodeBadRequest, "/paymentRequirements/payTo"},
		{"bad payer", func(d *docs) { d.settle["payer"] = "0x1234" }, fiscal.CodeBadRequest, "/settleResponse/payer"},
		{"payer nowhere", func(d *docs) { delete(d.settle, "payer"); d.payload = nil }, fiscal.CodeBadRequest, "/settleResponse/payer"},
		{"two payers", func(d *docs) { auth(d)["from"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906" }, fiscal.CodeBadRequest, "/paymentPayload/payload/authorization/from"},
		{"bad nonce", func(d *docs) { auth(d)["nonce"] = "0x11" }, fiscal.CodeBadRequest, "/paymentPayload/payload/authorization/nonce"},
		{"authorization to another payee", func(d *docs) { auth(d)["to"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906" }, fiscal.CodeBadRequest, "/paymentPayload/payload/authorization/to"},
		{"authorization of another value", func(d *docs) { auth(d)["value"] = "1500001" }, fiscal.CodeBadRequest, "/paymentPayload/payload/authorization/value"},
		{"x402 version 3", func(d *docs) { d.payload["x402Version"] = 3 }, ingest.CodeUnsupportedProtocol, "/paymentPayload/x402Version"},
		{"v1 payload without requirements", func(d *docs) {
			d.req = nil
			d.payload = map[string]any{"x402Version": 1, "scheme": "exact", "network": "base", "payload": inner(d)}
		}, fiscal.CodeBadRequest, "/paymentRequirements"},
		{"v2 accepted as requirements, bad", func(d *docs) {
			d.req = nil
			d.payload["accepted"].(map[string]any)["scheme"] = "upto"
		}, fiscal.CodeUnsupportedScheme, "/paymentPayload/accepted/scheme"},
		{"resource url with a control character", func(d *docs) {
			d.payload["resource"] = map[string]any{"url": "https://a.example/\u0007"}
		}, fiscal.CodeBadRequest, "/paymentPayload/resource/url"},
		{"duplicate member", func(d *docs) {
			d.raw[0] = `{"success":true,"transaction":"` + tx + `","transaction":"` + tx + `","network":"eip155:8453","payer":"` + payer + `"}`
		}, fiscal.CodeBadRequest, "/settleResponse/transaction"},
		{"not base64", func(d *docs) { d.raw[0] = "!!not base64!!" }, fiscal.CodeBadRequest, "/settleResponse"},
		{"base64 of an array", func(d *docs) { d.raw[0] = base64.StdEncoding.EncodeToString([]byte(`[1]`)) }, fiscal.CodeBadRequest, "/settleResponse"},
		{"trailing data", func(d *docs) {
			d.raw[0] = `{"success":true,"transaction":"` + tx + `","network":"eip155:8453","payer":"` + payer + `"} {}`
		}, fiscal.CodeBadRequest, "/settleResponse"},
		{"unknown buyer country", func(d *docs) { d.buyer.Country = "XX" }, fiscal.CodeBadRequest, "/buyer/consumerCountry"},
		{"postal code without country", func(d *docs) { d.buyer = fiscal.BuyerFacts{PostalCode: "35001"} }, fiscal.CodeBadRequest, "/buyer/consumerPostalCode"},
		{"supply kind", func(d *docs) { d.buyer.SupplyKind = "Digital Service" }, fiscal.CodeBadRequest, "/buyer/supplyKind"},
		{"description control character", func(d *docs) { d.buyer.Description = "a\x00b" }, fiscal.CodeBadRequest, "/buyer/description"},
		{"idempotency key", func(d *docs) { d.key = "has space" }, fiscal.CodeBadRequest, "Idempotency-Key"},
		{"unknown account", func(d *docs) { d.account = "acct_x" }, fiscal.CodeNotFound, ""},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := base()
			c.mutate(d)
			parts := [3][]byte{}
			for i, m := range []map[string]any{d.settle, d.req, d.payload} {
				if d.raw[i] != "" {
					parts[i] = []byte(d.raw[i])
				} else if m != nil {
					parts[i] = mustMarshal(t, m)
				}
			}
			for _, enqueue := range []bool{false, true} {
				call := e.IngestX402
				if enqueue {
					call = e.EnqueueX402
				}
				_, err := call(ctx, d.account, parts[0], parts[1], parts[2], d.buyer, d.key)
				if enqueue && c.code == fiscal.CodeChainUnavailable {
					if err != nil {
						t.Fatalf("enqueue of valid documents: %v", err)
					}
					continue
				}
				fe := wantCode(t, err, c.code)
				if fe.Field != c.field {
					t.Errorf("enqueue=%v: field %q, want %q (%s)", enqueue, fe.Field, c.field, fe.Detail)
				}
			}
		})
	}
	if e.Ledger().Size() != 0 {
		t.Fatalf("ledger size %d", e.Ledger().Size())
	}
}

// TestIngestTransferValidation: the evm-transfer arguments are checked before
// the chain is asked.
func TestIngestTransferValidation(t *testing.T) {
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(t, "http://127.0.0.1:1", evmverify.Policy{Timeout: time.Second}, clock)
	tx := "0x" + strings.Repeat("ab", 32)
	ctx := context.Background()
	cases := []struct {
		name                   string
		account, network, hash string
		buyer                  fiscal.BuyerFacts
		code                   fiscal.Code
		field                  string
	}{
		{"valid reaches the chain", "acct_0", "eip155:8453", tx, buyerDE, fiscal.CodeChainUnavailable, ""},
		{"network", "acct_0", "eip155:10", tx, buyerDE, fiscal.CodeUnsupportedNetwork, "/network"},
		{"v1 name is not CAIP-2", "acct_0", "base", tx, buyerDE, fiscal.CodeUnsupportedNetwork, "/network"},
		{"no policy for Ethereum", "acct_0", "eip155:1", tx, buyerDE, fiscal.CodeChainVerifyRequired, "/network"},
		{"hash", "acct_0", "eip155:8453", "0x12", buyerDE, fiscal.CodeBadRequest, "/txHash"},
		{"buyer", "acct_0", "eip155:8453", tx, fiscal.BuyerFacts{Country: "Germany"}, fiscal.CodeBadRequest, "/buyer/consumerCountry"},
		{"account", "nobody", "eip155:8453", tx, buyerDE, fiscal.CodeNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.IngestTransfer(ctx, c.account, c.network, c.hash, 0, c.buyer, "")
			if fe := wantCode(t, err, c.code); fe.Field != c.field {
				t.Errorf("field %q, want %q", fe.Field, c.field)
			}
		})
	}
}

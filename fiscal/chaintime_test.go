package fiscal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// oneTransferNode is a JSON-RPC node of Base holding one mined USDC
// transfer: tx in block 10, whose time is blockTime, head 12.
func oneTransferNode(t *testing.T, tx, from, to string, value int64, blockTime time.Time) string {
	t.Helper()
	pad := func(a string) string {
		return "0x000000000000000000000000" + strings.ToLower(strings.TrimPrefix(a, "0x"))
	}
	bh := "0x" + strings.Repeat("b1", 32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		var result any
		switch req.Method {
		case "eth_chainId":
			result = "0x2105"
		case "eth_blockNumber":
			result = "0xc"
		case "eth_getTransactionReceipt":
			result = map[string]any{"transactionHash": tx, "blockHash": bh, "blockNumber": "0xa", "status": "0x1",
				"logs": []any{map[string]any{
					"address": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "topics": []string{evmverify.TransferTopic, pad(from), pad(to)},
					"data": fmt.Sprintf("0x%064x", value), "logIndex": "0x1", "removed": false, "transactionHash": tx, "blockHash": bh,
				}}}
		case "eth_getBlockByNumber":
			if string(req.Params[0]) == `"0xa"` {
				result = map[string]any{"number": "0xa", "hash": bh, "parentHash": "0x" + strings.Repeat("b0", 32),
					"timestamp": fmt.Sprintf("0x%x", blockTime.Unix())}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestChainVerifiedSettlementTimeIsTheBlockTime: with chain verification
// required, a settlement is proven on chain, and its timestamp (the
// chargeable event: the VAT rate, the ECB rate day, the OSS quarter) must
// be the time the chain proves, the block's, within the clock skew the
// engine allows (DESIGN.md: chain verification checks "chain id, receipt
// status, block timestamp"). A settlement claiming 31 March for a transfer
// the chain dates 2 April was recorded as "verified" in the first
// quarter, its record contradicting its own verification facts.
func TestChainVerifiedSettlementTimeIsTheBlockTime(t *testing.T) {
	blockTime := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	req := fiscaltest.Request(1, "10", "DE", "2026-03-31T23:59:00Z")
	url := oneTransferNode(t, req.TxHash, req.PayerWallet, req.ReceiverWallet, 10_000_000, blockTime)
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{url}, Timeout: 5 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, blockTime.Add(time.Hour), fiscaltest.IrishSeller)
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()

	_, err = b.Settle(ctx, req, "")
	if fiscaltest.Code(err) != fiscal.CodeChainVerifyFailed || !strings.Contains(err.Error(), evmverify.ReasonTimeMismatch) {
		t.Fatalf("settlement timestamped 2 days before its block: %v, want CHAIN_VERIFY_FAILED %s", err, evmverify.ReasonTimeMismatch)
	}
	if n := e.Ledger().Size(); n != 0 {
		t.Fatalf("ledger size %d after a refused settlement", n)
	}

	// The merchant's clock a minute after the block: the same payment.
	req.Timestamp = blockTime.Add(time.Minute).Format(time.RFC3339)
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Record.Verification.Facts; res.Record.Verification.Chain != "verified" || f == nil || !f.BlockTime.Equal(blockTime) {
		t.Fatalf("verification %+v", res.Record.Verification)
	}
}

package ingest_test

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
)

// rvNode is an in-process JSON-RPC node for Base (chain id 8453), for the
// review tests (anvil is not installed here).
type rvNode struct {
	mu       sync.Mutex
	head     uint64
	receipts map[string]any
	txs      map[string]any
	blocks   map[uint64]any
	hang     time.Duration // sleep before answering
	chainID  uint64        // eth_chainId; 0 means Base (8453)
}

const (
	rvUSDC  = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	rvPayer = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	rvPayTo = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
)

// block times: 2026-04-10T09:00:00Z + 2 s per block (an ECB rate day)
var rvGenesis = time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC).Unix()

func q(n uint64) string { return fmt.Sprintf("0x%x", n) }

func rvHash(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return "0x" + hex.EncodeToString(h[:])
}

func newRVNode(t testing.TB) (*rvNode, string) {
	n := &rvNode{receipts: map[string]any{}, txs: map[string]any{}, blocks: map[uint64]any{}}
	n.blocks[0] = rvBlock(0)
	s := httptest.NewServer(n)
	t.Cleanup(s.Close)
	return n, s.URL
}

func rvBlock(n uint64) map[string]any {
	return map[string]any{"number": q(n), "hash": rvHash(fmt.Sprintf("block %d", n)), "parentHash": rvHash(fmt.Sprintf("block %d", n-1)), "timestamp": q(uint64(rvGenesis) + 2*n)}
}

func pad(addr string) string {
	return "0x000000000000000000000000" + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

// mine puts tx in block number with one USDC transfer log per value.
func (f *rvNode) mine(tx string, number uint64, from, to string, values ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bh := rvHash(fmt.Sprintf("block %d", number))
	logs := []map[string]any{}
	for i, v := range values {
		logs = append(logs, map[string]any{
			"address": rvUSDC, "topics": []string{evmverify.TransferTopic, pad(from), pad(to)},
			"data": fmt.Sprintf("0x%064x", v), "logIndex": q(uint64(i)), "removed": false,
			"transactionHash": tx, "blockHash": bh, "blockNumber": q(number),
		})
	}
	f.receipts[tx] = map[string]any{"transactionHash": tx, "blockHash": bh, "blockNumber": q(number), "status": "0x1", "logs": logs}
	f.txs[tx] = map[string]any{"hash": tx, "blockNumber": q(number)}
	for n := uint64(0); n <= number; n++ {
		if _, ok := f.blocks[n]; !ok {
			f.blocks[n] = rvBlock(n)
		}
	}
	f.head = max(f.head, number)
}

// drop forgets tx (a reorg took it out).
func (f *rvNode) drop(tx string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.receipts, tx)
	delete(f.txs, tx)
}

func (f *rvNode) advance(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := uint64(0); i < n; i++ {
		f.head++
		f.blocks[f.head] = rvBlock(f.head)
	}
}

func (f *rvNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad", 400)
		return
	}
	f.mu.Lock()
	hang := f.hang
	f.mu.Unlock()
	if hang > 0 {
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
			return
		}
	}
	str := func(p json.RawMessage) string { var s string; _ = json.Unmarshal(p, &s); return s }
	f.mu.Lock()
	var result any
	switch req.Method {
	case "eth_chainId":
		result = q(cmp.Or(f.chainID, 8453))
	case "eth_blockNumber":
		result = q(f.head)
	case "eth_syncing":
		result = false
	case "eth_getTransactionReceipt":
		result = f.receipts[strings.ToLower(str(req.Params[0]))]
	case "eth_getTransactionByHash":
		result = f.txs[strings.ToLower(str(req.Params[0]))]
	case "eth_getBlockByNumber":
		switch ref := str(req.Params[0]); ref {
		case "finalized":
			result = nil
		case "latest":
			result = f.blocks[f.head]
		default:
			var n uint64
			fmt.Sscanf(ref, "0x%x", &n)
			result = f.blocks[n]
		}
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// rvSetup is a fake node and an engine against it (policy p, a fresh
// directory, the clock of rvClock), closed with the test.
func rvSetup(t *testing.T, p evmverify.Policy) (*rvNode, *movingClock, *env) {
	t.Helper()
	node, url := newRVNode(t)
	clock := rvClock()
	e := rvEngine(t, t.TempDir(), url, p, clock)
	t.Cleanup(func() { e.Close() })
	return node, clock, e
}

// setHang makes every answer of the node wait d.
func (f *rvNode) setHang(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hang = d
}

// rvEngine is an engine on dir against the fake node (Base, mode required).
func rvEngine(t testing.TB, dir, url string, p evmverify.Policy, clock *movingClock) *env {
	t.Helper()
	return engineAt(t, dir, baseVerifier(t, url, p), clock)
}

func rvDocs(t testing.TB, tx string, amount int64) x402Docs {
	return sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: rvPayTo, nonce: rvHash("nonce " + tx), amount: amount})
}

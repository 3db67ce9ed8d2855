package evmverify

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeNode is a programmable JSON-RPC node for the failure modes a real
// node will not produce on demand (garbage, error objects, timeouts, reorg
// races). The happy paths are tested against anvil (anvil_test.go).
type fakeNode struct {
	mu        sync.Mutex
	chainID   uint64
	head      uint64
	finalized *uint64 // nil: the node answers null for "finalized"
	finErr    bool    // answer a JSON-RPC error for "finalized"
	syncing   bool
	receipts  map[string]any // tx hash → receipt object
	txs       map[string]any // tx hash → transaction object
	blocks    map[uint64]any // number → block object
	// intercept, when set, may answer a request itself (return true).
	intercept func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage, params []json.RawMessage) bool
	calls     map[string]int
}

func newFakeNode() *fakeNode {
	return &fakeNode{
		chainID:  8453,
		receipts: map[string]any{},
		txs:      map[string]any{},
		blocks:   map[uint64]any{},
		calls:    map[string]int{},
	}
}

// serve starts the node on an httptest server closed at the end of the test.
func (f *fakeNode) serve(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s.URL
}

func (f *fakeNode) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakeNode) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls[req.Method]++
	intercept := f.intercept
	f.mu.Unlock()
	if intercept != nil && intercept(w, r, req.Method, req.ID, req.Params) {
		return
	}
	f.mu.Lock()
	result, rpcErr := f.answer(req.Method, req.Params)
	f.mu.Unlock()
	reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		reply["error"] = rpcErr
	} else {
		reply["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

func str(p json.RawMessage) string {
	var s string
	_ = json.Unmarshal(p, &s)
	return s
}

func (f *fakeNode) answer(method string, params []json.RawMessage) (any, *RPCError) {
	switch method {
	case "eth_chainId":
		return formatQuantity(f.chainID), nil
	case "eth_blockNumber":
		return formatQuantity(f.head), nil
	case "eth_syncing":
		if f.syncing {
			return map[string]string{"startingBlock": "0x0", "currentBlock": "0x1", "highestBlock": "0x99"}, nil
		}
		return false, nil
	case "eth_getTransactionReceipt":
		return f.receipts[strings.ToLower(str(params[0]))], nil
	case "eth_getTransactionByHash":
		return f.txs[strings.ToLower(str(params[0]))], nil
	case "eth_getBlockByNumber":
		ref := str(params[0])
		switch ref {
		case TagFinalized:
			if f.finErr {
				return nil, &RPCError{Code: -39001, Message: "unknown block"}
			}
			if f.finalized == nil {
				return nil, nil
			}
			return f.blocks[*f.finalized], nil
		case TagLatest:
			return f.blocks[f.head], nil
		}
		n, err := parseQuantity(ref)
		if err != nil {
			return nil, &RPCError{Code: -32602, Message: "invalid block number"}
		}
		if b, ok := f.blocks[n]; ok {
			return b, nil
		}
		return nil, nil
	}
	return nil, &RPCError{Code: -32601, Message: "method not found"}
}

// Test fixtures: addresses and hashes that are not derived from the code
// under test.
const (
	fxPayer       = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	fxPayTo       = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
	fxFacilitator = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
	fxOther       = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc"
	fxUSDCBase    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" // mixed case on purpose
	fxTx          = "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344"
	authUsedTopic = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"
	fxBlockTime   = 1767225600 // 2026-01-01T00:00:00Z
)

func hash32(seed string) string {
	return fmt.Sprintf("0x%064x", new(big.Int).SetBytes([]byte(seed)))
}

func padTopic(addr string) string {
	return "0x000000000000000000000000" + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

func transferLog(index uint64, token, from, to string, value int64) map[string]any {
	return map[string]any{
		"address":  token,
		"topics":   []string{TransferTopic, padTopic(from), padTopic(to)},
		"data":     fmt.Sprintf("0x%064x", value),
		"logIndex": formatQuantity(index),
		"removed":  false,
	}
}

func authUsedLog(index uint64, token, authorizer string) map[string]any {
	return map[string]any{
		"address":  token,
		"topics":   []string{authUsedTopic, padTopic(authorizer), hash32("nonce")},
		"data":     "0x",
		"logIndex": formatQuantity(index),
	}
}

// mine records tx as mined in block number with the given logs and status,
// and makes number the head.
func (f *fakeNode) mine(tx string, number uint64, status string, logs ...map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bh := hash32(fmt.Sprintf("block %d", number))
	for _, l := range logs {
		l["transactionHash"] = tx
		l["blockHash"] = bh
		l["blockNumber"] = formatQuantity(number)
	}
	if logs == nil {
		logs = []map[string]any{}
	}
	f.receipts[tx] = map[string]any{
		"transactionHash": tx,
		"blockHash":       bh,
		"blockNumber":     formatQuantity(number),
		"status":          status,
		"from":            fxFacilitator, // the sender: never evidence
		"to":              strings.ToLower(fxUSDCBase),
		"logs":            logs,
	}
	f.txs[tx] = map[string]any{"hash": tx, "blockNumber": formatQuantity(number)}
	for n := uint64(0); n <= number; n++ {
		if _, ok := f.blocks[n]; !ok {
			f.blocks[n] = fakeBlock(n)
		}
	}
	f.head = max(f.head, number)
}

func fakeBlock(n uint64) map[string]any {
	return map[string]any{
		"number":     formatQuantity(n),
		"hash":       hash32(fmt.Sprintf("block %d", n)),
		"parentHash": hash32(fmt.Sprintf("block %d", n-1)),
		"timestamp":  formatQuantity(fxBlockTime + 2*n),
	}
}

// advance adds empty blocks on top of the head.
func (f *fakeNode) advance(blocks uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := uint64(0); i < blocks; i++ {
		f.head++
		f.blocks[f.head] = fakeBlock(f.head)
	}
}

func (f *fakeNode) setFinalized(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finalized = &n
}

// reply writes a raw HTTP body with status 200.
func reply(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

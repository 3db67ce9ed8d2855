package fakechain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fixtures of Base, typed from their public sources rather than taken from
// the code under test.
const (
	// BaseChainID is Base mainnet's EIP-155 chain id (0x2105).
	BaseChainID = 8453
	// USDCBase is Circle's USDC on Base, lower case
	// (developers.circle.com/stablecoins/usdc-contract-addresses).
	USDCBase = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	// Sender is the account that sends every mined transaction (the
	// facilitator of x402): a receipt's "from", never evidence of a payment.
	Sender = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
	// TransferTopic is keccak256("Transfer(address,address,uint256)"),
	// the ERC-20 Transfer event (EIP-20).
	TransferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	// AuthorizationUsedTopic is keccak256("AuthorizationUsed(address,bytes32)"),
	// the event of EIP-3009's transferWithAuthorization.
	AuthorizationUsedTopic = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"
	// BlockSeconds is Base's block time: block n is dated genesis + 2n s.
	BlockSeconds = 2
)

// Chain is the state a Node serves. Tests change it through Node.Edit.
type Chain struct {
	ChainID      uint64
	Head         uint64
	Finalized    *uint64 // nil: the node answers null for "finalized"
	Safe         *uint64 // nil: the node answers null for "safe"
	FinalizedErr bool    // answer a JSON-RPC error for "finalized" and "safe"
	Syncing      bool
	Receipts     map[string]map[string]any // lower-case tx hash → receipt object
	Txs          map[string]map[string]any // lower-case tx hash → transaction object
	Blocks       map[uint64]map[string]any // number → block object
	Genesis      int64                     // Unix time of block 0
}

// Call is one JSON-RPC request as the node received it.
type Call struct {
	ID     json.RawMessage
	Method string
	Params []json.RawMessage
}

// Param is parameter i as a string ("" when absent or not a string).
func (c Call) Param(i int) string {
	if i >= len(c.Params) {
		return ""
	}
	var s string
	_ = json.Unmarshal(c.Params[i], &s)
	return s
}

// Intercept may answer a call itself, and then returns true; false lets
// the node answer.
type Intercept func(w http.ResponseWriter, r *http.Request, c Call) bool

// Node is the fake JSON-RPC node, an http.Handler. Its methods are safe
// for concurrent use with the requests it serves.
type Node struct {
	mu        sync.Mutex
	chain     Chain
	calls     map[string]int
	hang      time.Duration
	intercept Intercept
}

// New is a synced Base node whose only block is block 0, dated genesis.
func New(genesis time.Time) *Node {
	n := &Node{
		chain: Chain{
			ChainID:  BaseChainID,
			Receipts: map[string]map[string]any{},
			Txs:      map[string]map[string]any{},
			Blocks:   map[uint64]map[string]any{},
			Genesis:  genesis.Unix(),
		},
		calls: map[string]int{},
	}
	n.chain.Blocks[0] = n.chain.block(0)
	return n
}

// Serve starts the node on an httptest server closed at the end of the
// test and returns its URL.
func (n *Node) Serve(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(n)
	t.Cleanup(s.Close)
	return s.URL
}

// Edit changes the chain under the node's lock.
func (n *Node) Edit(f func(c *Chain)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(&n.chain)
}

// SetChainID makes the node answer id to eth_chainId.
func (n *Node) SetChainID(id uint64) { n.Edit(func(c *Chain) { c.ChainID = id }) }

// SetFinalized makes block number the node's finalized block.
func (n *Node) SetFinalized(number uint64) { n.Edit(func(c *Chain) { c.Finalized = &number }) }

// SetSafe makes block number the node's safe block.
func (n *Node) SetSafe(number uint64) { n.Edit(func(c *Chain) { c.Safe = &number }) }

// SetHang makes every later answer wait d first (0: answer at once). A
// request whose client gives up while waiting gets no answer.
func (n *Node) SetHang(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hang = d
}

// SetIntercept installs f in front of the node's own answers (nil removes it).
func (n *Node) SetIntercept(f Intercept) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.intercept = f
}

// Count is how many calls of method the node has received.
func (n *Node) Count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

// Total is how many calls the node has received.
func (n *Node) Total() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	total := 0
	for _, c := range n.calls {
		total += c
	}
	return total
}

// Mine records tx as mined in block number with the given status ("0x1"
// success, "0x0" reverted) and logs, which it completes with the
// transaction and block they belong to, creates the blocks up to number
// that are missing, and makes number the head if it is above it.
func (n *Node) Mine(tx string, number uint64, status string, logs ...map[string]any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := &n.chain
	bh := BlockHash(number)
	for _, l := range logs {
		l["transactionHash"] = tx
		l["blockHash"] = bh
		l["blockNumber"] = Quantity(number)
	}
	if logs == nil {
		logs = []map[string]any{}
	}
	key := strings.ToLower(tx)
	c.Receipts[key] = map[string]any{
		"transactionHash": tx,
		"blockHash":       bh,
		"blockNumber":     Quantity(number),
		"status":          status,
		"from":            Sender,
		"to":              USDCBase,
		"logs":            logs,
	}
	c.Txs[key] = map[string]any{"hash": tx, "blockNumber": Quantity(number)}
	for i := uint64(0); i <= number; i++ {
		if _, ok := c.Blocks[i]; !ok {
			c.Blocks[i] = c.block(i)
		}
	}
	c.Head = max(c.Head, number)
}

// MineTransfer mines tx in block number as a successful transfer of value
// USDC base units on Base from → to: one Transfer log, index 0.
func (n *Node) MineTransfer(tx string, number uint64, from, to string, value int64) {
	n.Mine(tx, number, "0x1", TransferLog(0, USDCBase, from, to, value))
}

// Advance adds count empty blocks on top of the head.
func (n *Node) Advance(count uint64) {
	n.Edit(func(c *Chain) {
		for range count {
			c.Head++
			c.Blocks[c.Head] = c.block(c.Head)
		}
	})
}

func (c *Chain) block(number uint64) map[string]any {
	parent := "0x" + strings.Repeat("0", 64)
	if number > 0 {
		parent = BlockHash(number - 1)
	}
	return map[string]any{
		"number":     Quantity(number),
		"hash":       BlockHash(number),
		"parentHash": parent,
		"timestamp":  Quantity(uint64(c.Genesis) + BlockSeconds*number),
	}
}

// ServeHTTP answers one JSON-RPC request.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	call := Call{ID: req.ID, Method: req.Method, Params: req.Params}
	n.mu.Lock()
	n.calls[call.Method]++
	hang, intercept := n.hang, n.intercept
	n.mu.Unlock()
	if hang > 0 {
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
			return
		}
	}
	if intercept != nil && intercept(w, r, call) {
		return
	}
	n.mu.Lock()
	result, rpcErr := n.chain.answer(call)
	n.mu.Unlock()
	reply := map[string]any{"jsonrpc": "2.0", "id": call.ID}
	if rpcErr != nil {
		reply["error"] = rpcErr
	} else {
		reply["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (c *Chain) answer(call Call) (any, *rpcError) {
	switch call.Method {
	case "eth_chainId":
		return Quantity(c.ChainID), nil
	case "eth_blockNumber":
		return Quantity(c.Head), nil
	case "eth_syncing":
		if c.Syncing {
			return map[string]string{"startingBlock": "0x0", "currentBlock": "0x1", "highestBlock": "0x99"}, nil
		}
		return false, nil
	case "eth_getTransactionReceipt":
		return orNull(c.Receipts[strings.ToLower(call.Param(0))]), nil
	case "eth_getTransactionByHash":
		return orNull(c.Txs[strings.ToLower(call.Param(0))]), nil
	case "eth_getBlockByNumber":
		ref := call.Param(0)
		switch ref {
		case "finalized", "safe":
			if c.FinalizedErr {
				return nil, &rpcError{Code: -39001, Message: "unknown block"}
			}
			at := c.Finalized
			if ref == "safe" {
				at = c.Safe
			}
			if at == nil {
				return nil, nil
			}
			return orNull(c.Blocks[*at]), nil
		case "latest":
			return orNull(c.Blocks[c.Head]), nil
		}
		digits, ok := strings.CutPrefix(ref, "0x")
		number, err := strconv.ParseUint(digits, 16, 64)
		if !ok || err != nil {
			return nil, &rpcError{Code: -32602, Message: "invalid block number"}
		}
		return orNull(c.Blocks[number]), nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found"}
}

// orNull keeps a missing object null on the wire.
func orNull(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// Reply writes body as the answer, status 200, whatever it holds.
func Reply(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// ReplyResult answers call id with result, raw JSON written as given.
func ReplyResult(w http.ResponseWriter, id json.RawMessage, result string) {
	Reply(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`)
}

// ReplyError answers call id with a JSON-RPC error object.
func ReplyError(w http.ResponseWriter, id json.RawMessage, code int64, message string) {
	msg, _ := json.Marshal(message)
	Reply(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":`+strconv.FormatInt(code, 10)+`,"message":`+string(msg)+`}}`)
}

// Quantity is n as a JSON-RPC quantity (0x-prefixed, no leading zeros).
func Quantity(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// Hash is a 32-byte hash derived from seed (its SHA-256).
func Hash(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return "0x" + hex.EncodeToString(h[:])
}

// BlockHash is the hash of block number: the bytes of "block <number>"
// right-aligned in 32 bytes.
func BlockHash(number uint64) string {
	return fmt.Sprintf("0x%064x", []byte(fmt.Sprintf("block %d", number)))
}

// PadTopic is addr as an indexed event topic: 12 zero bytes, then the
// address, lower case.
func PadTopic(addr string) string {
	return "0x000000000000000000000000" + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

// TransferLog is an ERC-20 Transfer of value emitted by token, log index
// index.
func TransferLog(index uint64, token, from, to string, value int64) map[string]any {
	return map[string]any{
		"address":  token,
		"topics":   []string{TransferTopic, PadTopic(from), PadTopic(to)},
		"data":     fmt.Sprintf("0x%064x", value),
		"logIndex": Quantity(index),
		"removed":  false,
	}
}

// AuthorizationUsedLog is the EIP-3009 AuthorizationUsed(authorizer,
// nonce) of token, log index index; nonce is a 32-byte hex word.
func AuthorizationUsedLog(index uint64, token, authorizer, nonce string) map[string]any {
	return map[string]any{
		"address":  token,
		"topics":   []string{AuthorizationUsedTopic, PadTopic(authorizer), nonce},
		"data":     "0x",
		"logIndex": Quantity(index),
	}
}

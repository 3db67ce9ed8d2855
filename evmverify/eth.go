package evmverify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Receipt is the part of an eth_getTransactionReceipt result that
// verification reads. Hashes and addresses are lower case.
type Receipt struct {
	TxHash      string
	BlockHash   string
	BlockNumber uint64
	Status      uint64 // EIP-658: 1 success, 0 failure
	Logs        []Log
}

// Log is one event log of a receipt. Index is the log's position in its
// block (JSON-RPC "logIndex"), the index a claim refers to.
type Log struct {
	Address   string   // emitting contract, lower case
	Topics    []string // 0x + 64 hex, lower case
	Data      []byte
	Index     uint64
	TxHash    string // "" when the node omitted it
	BlockHash string // "" when the node omitted it
	Removed   bool
}

// Block is the part of an eth_getBlockByNumber result (without transaction
// bodies) that verification reads.
type Block struct {
	Number     uint64
	Hash       string
	ParentHash string
	Time       uint64 // Unix seconds (the block header's timestamp)
}

// Transaction is what verification reads from eth_getTransactionByHash: the
// transaction exists, and whether it is mined.
type Transaction struct {
	Hash        string
	Pending     bool   // blockNumber is null
	BlockNumber uint64 // valid when !Pending
}

// Block tags accepted by BlockByTag (execution-apis BlockTag).
const (
	TagLatest    = "latest"
	TagSafe      = "safe"
	TagFinalized = "finalized"
)

// ChainID calls eth_chainId (EIP-695).
func (c *Client) ChainID(ctx context.Context) (uint64, error) {
	return c.quantity(ctx, "eth_chainId")
}

// BlockNumber calls eth_blockNumber: the number of the node's head block.
func (c *Client) BlockNumber(ctx context.Context) (uint64, error) {
	return c.quantity(ctx, "eth_blockNumber")
}

func (c *Client) quantity(ctx context.Context, method string) (uint64, error) {
	var s string
	if err := c.Call(ctx, method, nil, &s); err != nil {
		return 0, err
	}
	n, err := parseQuantity(s)
	if err != nil {
		return 0, c.fail(method, "result: %v", err)
	}
	return n, nil
}

// Syncing calls eth_syncing, which answers false when the node is in sync
// and a progress object while it is catching up.
func (c *Client) Syncing(ctx context.Context) (bool, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "eth_syncing", nil, &raw); err != nil {
		return false, err
	}
	switch s := string(bytes.TrimSpace(raw)); {
	case s == "false":
		return false, nil
	case len(s) > 0 && s[0] == '{', s == "true":
		return true, nil
	}
	return false, c.fail("eth_syncing", "result is neither false nor an object")
}

// TransactionReceipt calls eth_getTransactionReceipt. found is false when
// the node answers null: the transaction is unknown to it or not yet mined.
func (c *Client) TransactionReceipt(ctx context.Context, txHash string) (r Receipt, found bool, err error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "eth_getTransactionReceipt", []any{txHash}, &raw); err != nil {
		return Receipt{}, false, err
	}
	r, found, err = decodeReceipt(raw)
	if err != nil {
		return Receipt{}, false, c.fail("eth_getTransactionReceipt", "%v", err)
	}
	return r, found, nil
}

// TransactionByHash calls eth_getTransactionByHash. found is false when the
// node answers null.
func (c *Client) TransactionByHash(ctx context.Context, txHash string) (tx Transaction, found bool, err error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "eth_getTransactionByHash", []any{txHash}, &raw); err != nil {
		return Transaction{}, false, err
	}
	tx, found, err = decodeTransaction(raw)
	if err != nil {
		return Transaction{}, false, c.fail("eth_getTransactionByHash", "%v", err)
	}
	return tx, found, nil
}

// BlockByNumber calls eth_getBlockByNumber [number, false]. found is false
// when the node has no block at that height.
func (c *Client) BlockByNumber(ctx context.Context, number uint64) (b Block, found bool, err error) {
	return c.block(ctx, formatQuantity(number))
}

// BlockByTag calls eth_getBlockByNumber [tag, false] for TagLatest, TagSafe
// or TagFinalized. found is false when the node answers null (some nodes do
// so for "finalized" before anything is finalized; others answer an error).
func (c *Client) BlockByTag(ctx context.Context, tag string) (b Block, found bool, err error) {
	switch tag {
	case TagLatest, TagSafe, TagFinalized:
	default:
		return Block{}, false, fmt.Errorf("evmverify: unknown block tag %q", tag)
	}
	return c.block(ctx, tag)
}

func (c *Client) block(ctx context.Context, ref string) (Block, bool, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "eth_getBlockByNumber", []any{ref, false}, &raw); err != nil {
		return Block{}, false, err
	}
	b, found, err := decodeBlock(raw)
	if err != nil {
		return Block{}, false, c.fail("eth_getBlockByNumber", "%v", err)
	}
	return b, found, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

type wireReceipt struct {
	TransactionHash string     `json:"transactionHash"`
	BlockHash       string     `json:"blockHash"`
	BlockNumber     string     `json:"blockNumber"`
	Status          *string    `json:"status"`
	Logs            *[]wireLog `json:"logs"`
}

type wireLog struct {
	Address         string   `json:"address"`
	Topics          []string `json:"topics"`
	Data            string   `json:"data"`
	LogIndex        string   `json:"logIndex"`
	TransactionHash *string  `json:"transactionHash"`
	BlockHash       *string  `json:"blockHash"`
	Removed         bool     `json:"removed"`
}

var errNoLogs = errors.New("receipt has no logs array")

// decodeReceipt turns an eth_getTransactionReceipt result into a Receipt,
// checking the syntax of every field that verification reads. Fields it
// does not read (gasUsed, from, to, ...) are ignored on purpose: tx.from
// and tx.to say nothing about who paid whom (see the package doc: x402's
// facilitator sends the transaction, https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md).
func decodeReceipt(raw json.RawMessage) (Receipt, bool, error) {
	if isNull(raw) {
		return Receipt{}, false, nil
	}
	var w wireReceipt
	if err := json.Unmarshal(raw, &w); err != nil {
		return Receipt{}, false, fmt.Errorf("receipt: %v", err)
	}
	var r Receipt
	var err error
	if r.TxHash, err = ParseTxHash(w.TransactionHash); err != nil {
		return Receipt{}, false, fmt.Errorf("receipt transactionHash: %v", err)
	}
	if r.BlockHash, err = parseFixedHex(w.BlockHash, 32); err != nil {
		return Receipt{}, false, fmt.Errorf("receipt blockHash: %v", err)
	}
	if r.BlockNumber, err = parseQuantity(w.BlockNumber); err != nil {
		return Receipt{}, false, fmt.Errorf("receipt blockNumber: %v", err)
	}
	// Every chain this package serves is post-Byzantium (EIP-658), so a
	// receipt without status is not one it can judge.
	if w.Status == nil {
		return Receipt{}, false, errors.New("receipt has no status (pre-EIP-658 receipt)")
	}
	if r.Status, err = parseQuantity(*w.Status); err != nil || r.Status > 1 {
		return Receipt{}, false, fmt.Errorf("receipt status %.20q is neither 0x0 nor 0x1", *w.Status)
	}
	if w.Logs == nil {
		return Receipt{}, false, errNoLogs
	}
	r.Logs = make([]Log, 0, len(*w.Logs))
	seen := make(map[uint64]bool, len(*w.Logs))
	for i, wl := range *w.Logs {
		l, err := decodeLog(wl)
		if err != nil {
			return Receipt{}, false, fmt.Errorf("receipt log %d: %v", i, err)
		}
		if seen[l.Index] {
			return Receipt{}, false, fmt.Errorf("receipt log %d: duplicate logIndex %d", i, l.Index)
		}
		seen[l.Index] = true
		r.Logs = append(r.Logs, l)
	}
	return r, true, nil
}

func decodeLog(w wireLog) (Log, error) {
	var l Log
	var err error
	if l.Address, err = ParseAddress(w.Address); err != nil {
		return Log{}, err
	}
	// EVM LOG0..LOG4: at most four topics.
	if len(w.Topics) > 4 {
		return Log{}, fmt.Errorf("%d topics (at most 4)", len(w.Topics))
	}
	l.Topics = make([]string, len(w.Topics))
	for i, t := range w.Topics {
		if l.Topics[i], err = parseFixedHex(t, 32); err != nil {
			return Log{}, fmt.Errorf("topic %d: %v", i, err)
		}
	}
	if l.Data, err = parseData(w.Data); err != nil {
		return Log{}, err
	}
	if l.Index, err = parseQuantity(w.LogIndex); err != nil {
		return Log{}, fmt.Errorf("logIndex: %v", err)
	}
	if w.TransactionHash != nil {
		if l.TxHash, err = ParseTxHash(*w.TransactionHash); err != nil {
			return Log{}, err
		}
	}
	if w.BlockHash != nil {
		if l.BlockHash, err = parseFixedHex(*w.BlockHash, 32); err != nil {
			return Log{}, fmt.Errorf("blockHash: %v", err)
		}
	}
	l.Removed = w.Removed
	return l, nil
}

type wireBlock struct {
	Number     *string `json:"number"`
	Hash       *string `json:"hash"`
	ParentHash string  `json:"parentHash"`
	Timestamp  string  `json:"timestamp"`
}

// decodeBlock turns an eth_getBlockByNumber result into a Block. A block
// whose number or hash is null is a pending block, which verification
// never asks for: it is refused as garbage.
func decodeBlock(raw json.RawMessage) (Block, bool, error) {
	if isNull(raw) {
		return Block{}, false, nil
	}
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		return Block{}, false, fmt.Errorf("block: %v", err)
	}
	if w.Number == nil || w.Hash == nil {
		return Block{}, false, errors.New("block has no number or hash (pending block)")
	}
	var b Block
	var err error
	if b.Number, err = parseQuantity(*w.Number); err != nil {
		return Block{}, false, fmt.Errorf("block number: %v", err)
	}
	if b.Hash, err = parseFixedHex(*w.Hash, 32); err != nil {
		return Block{}, false, fmt.Errorf("block hash: %v", err)
	}
	if b.ParentHash, err = parseFixedHex(w.ParentHash, 32); err != nil {
		return Block{}, false, fmt.Errorf("block parentHash: %v", err)
	}
	if b.Time, err = parseQuantity(w.Timestamp); err != nil {
		return Block{}, false, fmt.Errorf("block timestamp: %v", err)
	}
	if _, ok := unixSeconds(b.Time); !ok {
		return Block{}, false, errors.New("block timestamp out of range")
	}
	return b, true, nil
}

type wireTransaction struct {
	Hash        string  `json:"hash"`
	BlockNumber *string `json:"blockNumber"`
}

func decodeTransaction(raw json.RawMessage) (Transaction, bool, error) {
	if isNull(raw) {
		return Transaction{}, false, nil
	}
	var w wireTransaction
	if err := json.Unmarshal(raw, &w); err != nil {
		return Transaction{}, false, fmt.Errorf("transaction: %v", err)
	}
	var tx Transaction
	var err error
	if tx.Hash, err = ParseTxHash(w.Hash); err != nil {
		return Transaction{}, false, err
	}
	if w.BlockNumber == nil {
		tx.Pending = true
		return tx, true, nil
	}
	if tx.BlockNumber, err = parseQuantity(*w.BlockNumber); err != nil {
		return Transaction{}, false, fmt.Errorf("transaction blockNumber: %v", err)
	}
	return tx, true, nil
}

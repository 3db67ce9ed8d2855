package evmverify

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"time"
)

// Claim is what a payment says happened on chain: Amount atomic units of
// Asset moved from Payer to Receiver in transaction TxHash on Network.
// Addresses and the hash are accepted in any case.
type Claim struct {
	Network  string   // CAIP-2, e.g. NetworkBase
	TxHash   string   // 0x + 64 hex
	Asset    string   // token contract address; "" = the network's USDC (USDCContract)
	Payer    string   // 0x + 40 hex: the Transfer's from, not the transaction sender
	Receiver string   // 0x + 40 hex: the Transfer's to
	Amount   *big.Int // atomic units (6 decimals for USDC), > 0
	LogIndex *uint64  // optional: the log (block-level logIndex) that must match
	// Nonce is optional: the EIP-3009 authorization nonce (0x + 64 hex) of
	// a payment made by transferWithAuthorization (x402 exact, method
	// eip3009). Unless empty, the receipt must carry the asset's
	// AuthorizationUsed(Payer, Nonce) event, and the Transfer checked is
	// the asset's first Transfer log after it (see [AuthorizationUsedTopic]).
	Nonce string
	// Time is optional: when the claim says the transfer settled. Unless
	// zero, the block's time must lie within MaxTimeSkew of it.
	Time time.Time
}

// MaxTimeSkew is how far a claim's Time may lie from its block's time: the
// clock skew between the chain and the merchant that the engine allows a
// settlement timestamp (internal/wire MaxClockSkew), the same both ways.
const MaxTimeSkew = 5 * time.Minute

// Facts are what the chain proved about a claim. They are stored on the
// fiscal record and signed into the receipt, so their JSON form is a wire
// format (see the package doc, # Wire format).
type Facts struct {
	Network       string    `json:"network"`       // CAIP-2
	TxHash        string    `json:"txHash"`        // lower case
	LogIndex      uint64    `json:"logIndex"`      // the matched Transfer log, block-level index
	BlockNumber   uint64    `json:"blockNumber"`   //
	BlockHash     string    `json:"blockHash"`     // lower case; re-checked against the block
	BlockTime     time.Time `json:"blockTime"`     // the block header's timestamp, UTC, whole seconds
	Confirmations uint64    `json:"confirmations"` // head - blockNumber + 1 when verified
	Finalized     bool      `json:"finalized"`     // block <= the node's "finalized" block when verified
	Token         string    `json:"token"`         // emitting contract, lower case
	From          string    `json:"from"`          // Transfer from, lower case
	To            string    `json:"to"`            // Transfer to, lower case
	Amount        string    `json:"amount"`        // Transfer value, atomic units, decimal
}

// Mode says whether a network's payments must be verified on chain.
type Mode string

const (
	// ModeRequired: a payment on the network is accepted only once Verify
	// succeeds.
	ModeRequired Mode = "required"
	// ModeOff: payments on the network are not checked on chain (the
	// record says so). This is also the Mode of a network without policy.
	ModeOff Mode = "off"
)

// DefaultTimeout bounds one verification attempt against one endpoint when
// Policy.Timeout is zero. A verification is about five calls; ten seconds
// leave room for a slow provider and still fail over in time.
const DefaultTimeout = 10 * time.Second

// Policy is the verification policy of one network.
type Policy struct {
	// Mode is ModeRequired or ModeOff; the zero value "" is refused by
	// NewVerifier, so that a forgotten mode is not silently "off".
	Mode Mode
	// RPCURLs are JSON-RPC endpoints of the network, tried in order: the
	// next one only when the previous is unavailable (or, for a missing
	// transaction, to ask a second node). ModeRequired needs at least one.
	RPCURLs []string
	// MinConfirmations is the depth the block must reach (head - block + 1).
	// Zero means 1: the transaction is mined.
	MinConfirmations uint64
	// RequireFinalized additionally requires the block to be at or below
	// the node's "finalized" block (about 13 min on Ethereum, about 20 min
	// on Base: https://docs.base.org/base-chain/network-information/transaction-finality;
	// Ethereum finalizes after 2 epochs of 32 slots of 12 s,
	// https://ethereum.org/en/developers/docs/consensus-mechanisms/pos/).
	RequireFinalized bool
	// Timeout bounds one attempt (all calls) against one endpoint, so that
	// a hanging endpoint leaves time for the next. Zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// required is the effective minimum confirmation count.
func (p Policy) required() uint64 { return max(p.MinConfirmations, 1) }

type network struct {
	name    string
	chainID uint64
	usdc    string // "" when USDCContract does not know the network
	policy  Policy
	clients []*Client
}

// Verifier checks claims against the chains named in its policies. It is
// immutable after NewVerifier and safe for concurrent use.
type Verifier struct {
	networks map[string]*network
}

// NewVerifier builds a Verifier from one Policy per CAIP-2 network. Every
// key must be a canonical "eip155:<chain id>"; hc nil means a fresh
// http.Client (each call is bounded by the context and Policy.Timeout).
// The policies are copied.
func NewVerifier(policies map[string]Policy, hc *http.Client) (*Verifier, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	v := &Verifier{networks: make(map[string]*network, len(policies))}
	for name, p := range policies {
		id, err := ChainID(name)
		if err != nil {
			return nil, fmt.Errorf("evmverify: policy: %w", err)
		}
		switch p.Mode {
		case ModeRequired, ModeOff:
		default:
			return nil, fmt.Errorf("evmverify: policy %s: mode %q is neither %q nor %q", name, p.Mode, ModeRequired, ModeOff)
		}
		if p.Mode == ModeRequired && len(p.RPCURLs) == 0 {
			return nil, fmt.Errorf("evmverify: policy %s: mode %q needs at least one rpc url", name, p.Mode)
		}
		if p.Timeout < 0 {
			return nil, fmt.Errorf("evmverify: policy %s: negative timeout", name)
		}
		if p.Timeout == 0 {
			p.Timeout = DefaultTimeout
		}
		n := &network{name: name, chainID: id, policy: p}
		n.usdc, _ = USDCContract(name)
		n.policy.RPCURLs = append([]string(nil), p.RPCURLs...)
		for i, u := range p.RPCURLs {
			c, err := NewClient(u, hc)
			if err != nil {
				return nil, fmt.Errorf("evmverify: policy %s: rpc url %d: %w", name, i, err)
			}
			n.clients = append(n.clients, c)
		}
		v.networks[name] = n
	}
	return v, nil
}

// Mode returns the configured mode of a network, ModeOff when the network
// has no policy.
func (v *Verifier) Mode(network string) Mode {
	if n, ok := v.networks[network]; ok {
		return n.policy.Mode
	}
	return ModeOff
}

// Networks returns the configured networks, sorted.
func (v *Verifier) Networks() []string {
	names := make([]string, 0, len(v.networks))
	for name := range v.networks {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Verify proves a claim on chain, or says why it cannot. It never reads
// the transaction's sender or recipient: the payer and receiver are those
// of the asset's Transfer log, because facilitators, Permit2 proxies and
// smart wallets send x402 transactions on the payer's behalf
// (https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md).
//
// Checks, in order, against one endpoint: eth_chainId equals the network's
// chain id; the receipt exists and its status is 1; exactly one Transfer
// log of the asset from Payer to Receiver with value Amount (or the log at
// LogIndex matches; with a Nonce, the asset's first Transfer log after its
// AuthorizationUsed(Payer, Nonce) log); the node's head and finalized block give the depth;
// the block at the receipt's number still has the receipt's block hash, and
// its timestamp is BlockTime, within MaxTimeSkew of the claim's Time when
// it has one. Then the policy's depth is enforced.
//
// Errors: *ClaimError (malformed claim), *RejectedError (the chain says
// no), *NotFinalError (not deep enough yet), ErrUnavailable (wrapped; no
// answer could be had), ErrNotConfigured (no endpoint for the network).
// Verify works whatever the network's Mode; Mode is the caller's switch.
func (v *Verifier) Verify(ctx context.Context, c Claim) (Facts, error) {
	w, n, txHash, err := v.prepare(c)
	if err != nil {
		return Facts{}, err
	}
	return v.run(ctx, n, txHash, w)
}

// ReadTransfer reads the USDC Transfer log at logIndex of a transaction
// (the evm-transfer ingest path, where the chain is the source of the
// payment's facts rather than their judge). The checks are those of Verify
// minus the claim: the log must exist, be an ERC-20 Transfer and be emitted
// by the network's USDC contract (else ReasonNoMatchingLog,
// ReasonLogNotTransfer, ReasonAssetMismatch).
func (v *Verifier) ReadTransfer(ctx context.Context, network, txHash string, logIndex uint64) (Facts, error) {
	n, err := v.network(network, "")
	if err != nil {
		return Facts{}, err
	}
	h, err := ParseTxHash(txHash)
	if err != nil {
		return Facts{}, &ClaimError{Field: "TxHash", Err: err}
	}
	return v.run(ctx, n, h, &want{asset: n.usdc, logIndex: &logIndex})
}

// network resolves a claim's network and asset. asset is the claim's
// (validated, lower case) asset or "" for the network's USDC.
func (v *Verifier) network(name, asset string) (*network, error) {
	if _, err := ChainID(name); err != nil {
		return nil, reject(ReasonUnsupportedNetwork, "%v", err)
	}
	if _, known := USDCContract(name); asset == "" && !known {
		return nil, reject(ReasonUnsupportedNetwork, "no USDC contract known on %s; name the asset", name)
	}
	n, ok := v.networks[name]
	if !ok || len(n.clients) == 0 {
		return nil, fmt.Errorf("evmverify: %s: %w", name, ErrNotConfigured)
	}
	return n, nil
}

func (v *Verifier) prepare(c Claim) (*want, *network, string, error) {
	txHash, err := ParseTxHash(c.TxHash)
	if err != nil {
		return nil, nil, "", &ClaimError{Field: "TxHash", Err: err}
	}
	w := &want{claim: true, logIndex: c.LogIndex, time: c.Time}
	if c.Nonce != "" {
		if w.nonce, err = parseFixedHex(c.Nonce, 32); err != nil {
			return nil, nil, "", &ClaimError{Field: "Nonce", Err: fmt.Errorf("nonce %.80q: %w", c.Nonce, err)}
		}
	}
	if c.Asset != "" {
		if w.asset, err = ParseAddress(c.Asset); err != nil {
			return nil, nil, "", &ClaimError{Field: "Asset", Err: err}
		}
	}
	if w.payer, err = ParseAddress(c.Payer); err != nil {
		return nil, nil, "", &ClaimError{Field: "Payer", Err: err}
	}
	if w.receiver, err = ParseAddress(c.Receiver); err != nil {
		return nil, nil, "", &ClaimError{Field: "Receiver", Err: err}
	}
	switch {
	case c.Amount == nil:
		return nil, nil, "", &ClaimError{Field: "Amount", Err: errors.New("missing")}
	case c.Amount.Sign() <= 0:
		return nil, nil, "", &ClaimError{Field: "Amount", Err: errors.New("not positive")}
	case c.Amount.BitLen() > 256:
		return nil, nil, "", &ClaimError{Field: "Amount", Err: errors.New("exceeds uint256")}
	}
	w.amount = new(big.Int).Set(c.Amount)
	n, err := v.network(c.Network, w.asset)
	if err != nil {
		return nil, nil, "", err
	}
	if w.asset == "" {
		w.asset = n.usdc
	}
	return w, n, txHash, nil
}

// run asks the network's endpoints in order. The next endpoint is tried
// when one is unavailable, and also when one knows nothing of the
// transaction: a node that is a block behind answers null for a fresh
// transaction, so a negative answer about existence is only taken once no
// other endpoint has a better one. A definitive answer (facts, a rejection
// or a depth shortfall read from a receipt) ends the search.
func (v *Verifier) run(ctx context.Context, n *network, txHash string, w *want) (Facts, error) {
	var (
		notFound  error // first tx_not_found
		pending   error // first pending NotFinalError
		unavail   []error
		wrongSeen error
	)
	for _, c := range n.clients {
		if ctx.Err() != nil {
			unavail = append(unavail, fmt.Errorf("evmverify: %s: %w: %w", n.name, ErrUnavailable, ctx.Err()))
			break
		}
		f, err := v.attempt(ctx, n, c, txHash, w)
		if err == nil {
			return f, nil
		}
		var rej *RejectedError
		var nf *NotFinalError
		switch {
		case errors.As(err, &rej) && rej.Reason == ReasonTxNotFound:
			if notFound == nil {
				notFound = err
			}
		case errors.As(err, &rej) && rej.Reason == ReasonWrongChain:
			// One misconfigured endpoint must not condemn the claim while
			// another endpoint may serve the right chain.
			if wrongSeen == nil {
				wrongSeen = err
			}
		case errors.As(err, &nf) && nf.Pending:
			if pending == nil {
				pending = err
			}
		case errors.Is(err, ErrUnavailable):
			unavail = append(unavail, err)
		default:
			return Facts{}, err
		}
	}
	switch {
	case pending != nil:
		return Facts{}, pending
	case notFound != nil:
		return Facts{}, notFound
	case len(unavail) > 0:
		return Facts{}, fmt.Errorf("evmverify: %s: no endpoint answered: %w", n.name, errors.Join(unavail...))
	case wrongSeen != nil:
		return Facts{}, wrongSeen
	}
	return Facts{}, fmt.Errorf("evmverify: %s: %w", n.name, ErrNotConfigured)
}

// attempt runs one whole verification against one endpoint, so that every
// fact comes from the same node's view of the chain.
func (v *Verifier) attempt(ctx context.Context, n *network, c *Client, txHash string, w *want) (Facts, error) {
	ctx, cancel := context.WithTimeout(ctx, n.policy.Timeout)
	defer cancel()

	id, err := c.ChainID(ctx)
	if err != nil {
		return Facts{}, err
	}
	if id != n.chainID {
		// The detail reaches API clients: it names chain ids, never the
		// operator's endpoint.
		return Facts{}, reject(ReasonWrongChain, "the rpc endpoint serves chain id %d, %s is chain id %d",
			id, n.name, n.chainID)
	}

	rc, found, err := c.TransactionReceipt(ctx, txHash)
	if err != nil {
		return Facts{}, err
	}
	if !found {
		return Facts{}, v.missingReceipt(ctx, n, c, txHash)
	}
	if rc.TxHash != txHash {
		return Facts{}, c.fail("eth_getTransactionReceipt", "receipt is for transaction %s", rc.TxHash)
	}
	if rc.Status != 1 {
		return Facts{}, reject(ReasonTxReverted, "transaction %s failed (status 0) in block %d", txHash, rc.BlockNumber)
	}
	t, rej := w.match(rc.Logs)
	if rej != nil {
		return Facts{}, rej
	}
	if err := checkLog(c, rc, t.index, txHash); err != nil {
		return Facts{}, err
	}

	// Depth first, then the block: if the block at the receipt's height
	// still carries the receipt's hash after the finalized head was read,
	// the receipt's block is the one that is final (a reorg between the calls
	// would change the hash at that height).
	head, err := c.BlockNumber(ctx)
	if err != nil {
		return Facts{}, err
	}
	if head < rc.BlockNumber {
		return Facts{}, c.fail("eth_blockNumber", "head %d is below the receipt's block %d", head, rc.BlockNumber)
	}
	finHead, finKnown, err := v.finalizedHead(ctx, n, c)
	if err != nil {
		return Facts{}, err
	}
	finalized := finKnown && rc.BlockNumber <= finHead
	blk, found, err := c.BlockByNumber(ctx, rc.BlockNumber)
	if err != nil {
		return Facts{}, err
	}
	if !found {
		return Facts{}, fmt.Errorf("evmverify: rpc %s: %w: %w: block %d of the receipt is gone",
			c.Endpoint(), ErrUnavailable, ErrReorg, rc.BlockNumber)
	}
	if blk.Hash != rc.BlockHash || blk.Number != rc.BlockNumber {
		return Facts{}, fmt.Errorf("evmverify: rpc %s: %w: %w: receipt names block %d %s, node now has %d %s",
			c.Endpoint(), ErrUnavailable, ErrReorg, rc.BlockNumber, rc.BlockHash, blk.Number, blk.Hash)
	}
	secs, _ := unixSeconds(blk.Time) // range checked by decodeBlock

	f := Facts{
		Network:       n.name,
		TxHash:        txHash,
		LogIndex:      t.index,
		BlockNumber:   rc.BlockNumber,
		BlockHash:     rc.BlockHash,
		BlockTime:     time.Unix(secs, 0).UTC(),
		Confirmations: head - rc.BlockNumber + 1,
		Finalized:     finalized,
		Token:         t.token,
		From:          t.from,
		To:            t.to,
		Amount:        t.value.String(),
	}
	if !w.time.IsZero() && (f.BlockTime.Sub(w.time) > MaxTimeSkew || w.time.Sub(f.BlockTime) > MaxTimeSkew) {
		return Facts{}, reject(ReasonTimeMismatch, "block %d is dated %s, claim says %s (more than %v apart)",
			f.BlockNumber, f.BlockTime.Format(time.RFC3339), w.time.UTC().Format(time.RFC3339), MaxTimeSkew)
	}
	p := n.policy
	if f.Confirmations < p.required() || (p.RequireFinalized && !f.Finalized) {
		nf := &NotFinalError{
			Confirmations:    f.Confirmations,
			Required:         p.required(),
			Finalized:        f.Finalized,
			RequireFinalized: p.RequireFinalized,
			Facts:            f,
		}
		nf.RetryAfter = retryAfter(n.name, nf, finHead, finKnown)
		return Facts{}, nf
	}
	return f, nil
}

// checkLog refuses a matched log whose own bookkeeping contradicts the
// receipt: a node that does so is broken or mid-reorg, and its logs are not
// evidence.
func checkLog(c *Client, rc Receipt, index uint64, txHash string) error {
	for _, l := range rc.Logs {
		if l.Index != index {
			continue
		}
		switch {
		case l.Removed:
			return fmt.Errorf("evmverify: rpc %s: %w: %w: log %d is marked removed", c.Endpoint(), ErrUnavailable, ErrReorg, index)
		case l.BlockHash != "" && l.BlockHash != rc.BlockHash:
			return fmt.Errorf("evmverify: rpc %s: %w: %w: log %d is in block %s, receipt in %s",
				c.Endpoint(), ErrUnavailable, ErrReorg, index, l.BlockHash, rc.BlockHash)
		case l.TxHash != "" && l.TxHash != txHash:
			return c.fail("eth_getTransactionReceipt", "log %d belongs to transaction %s", index, l.TxHash)
		}
	}
	return nil
}

// missingReceipt decides what a null receipt means. The node may know the
// transaction as pending (NotFinalError, Pending), may still be syncing
// (ErrUnavailable: a null from a node that is behind proves nothing), or,
// synced, knows nothing of it (tx_not_found).
func (v *Verifier) missingReceipt(ctx context.Context, n *network, c *Client, txHash string) error {
	tx, known, err := c.TransactionByHash(ctx, txHash)
	if err != nil {
		return err
	}
	if known {
		if tx.Hash != txHash {
			return c.fail("eth_getTransactionByHash", "answer is for transaction %s", tx.Hash)
		}
		if !tx.Pending {
			// Mined, yet no receipt: the node's receipt index lags its
			// transaction index (geth while indexing).
			return c.fail("eth_getTransactionReceipt", "transaction is mined in block %d but has no receipt yet", tx.BlockNumber)
		}
		return &NotFinalError{Required: n.policy.required(), RequireFinalized: n.policy.RequireFinalized, Pending: true,
			RetryAfter: timingOf(n.name).block}
	}
	syncing, err := c.Syncing(ctx)
	if err != nil {
		return err
	}
	if syncing {
		return c.fail("eth_syncing", "node is syncing; its missing receipt proves nothing")
	}
	return reject(ReasonTxNotFound, "no transaction %s on %s", txHash, n.name)
}

// finalizedHead returns the number of the node's "finalized" block and
// whether the node named one. A node that cannot say (no "finalized" tag
// support, or nothing finalized yet) leaves every block unfinalized; that
// is only an error when the policy requires finality.
func (v *Verifier) finalizedHead(ctx context.Context, n *network, c *Client) (uint64, bool, error) {
	fin, found, err := c.BlockByTag(ctx, TagFinalized)
	switch {
	case err != nil && n.policy.RequireFinalized:
		return 0, false, err
	case err != nil || !found:
		return 0, false, nil
	}
	return fin.Number, true, nil
}

// chainTiming is what a retry hint needs to know of a chain: its block
// interval and how long finality takes. Base: about 2 s blocks and about
// 20 min to "finalized"; Ethereum: 12 s slots and 2 epochs, about 13 min
// (https://docs.base.org/base-chain/network-information/transaction-finality;
// https://ethereum.org/en/developers/docs/consensus-mechanisms/pos/).
type chainTiming struct{ block, finality time.Duration }

var chainTimings = map[string]chainTiming{
	NetworkBase:     {block: 2 * time.Second, finality: 20 * time.Minute},
	NetworkEthereum: {block: 12 * time.Second, finality: 13 * time.Minute},
}

// timingOf returns a chain's timing; for other chains Ethereum's, the
// slower guess. It only feeds a retry hint, never a verdict.
func timingOf(network string) chainTiming {
	if t, ok := chainTimings[network]; ok {
		return t
	}
	return chainTimings[NetworkEthereum]
}

// retryAfter estimates when a NotFinalError can turn into facts: the
// missing confirmations times the block interval, or, for finality, the
// distance from the node's finalized block to ours times the block
// interval (the finalized head moves at the block rate on average), or
// the chain's finality time when the node names no finalized block.
func retryAfter(network string, e *NotFinalError, finHead uint64, finKnown bool) time.Duration {
	t := timingOf(network)
	d := t.block
	if e.Confirmations < e.Required {
		d = max(d, time.Duration(e.Required-e.Confirmations)*t.block)
	}
	if e.RequireFinalized && !e.Finalized {
		wait := t.finality
		if finKnown && e.Facts.BlockNumber > finHead {
			wait = time.Duration(min(e.Facts.BlockNumber-finHead, 1<<20)) * t.block
		}
		d = max(d, wait)
	}
	return d
}

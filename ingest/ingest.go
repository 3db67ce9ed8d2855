package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/x402"
	"github.com/shopspring/decimal"
)

// Protocols and schemes of the ways in (the payment protocols GET
// /v1/capabilities lists).
const (
	ProtocolX402        = "x402"
	ProtocolEVMTransfer = "evm-transfer"
	SchemeERC20Transfer = "erc20-transfer"
)

// The error codes of ingest (both 422; their statuses are in fiscal's one
// table).
const (
	// CodeNotSettled: an x402 settle response with success:false: nothing
	// to record.
	CodeNotSettled fiscal.Code = "NOT_SETTLED"
	// CodeUnsupportedProtocol: an x402 version other than 2 (and v1 names).
	CodeUnsupportedProtocol fiscal.Code = "UNSUPPORTED_PROTOCOL"
)

// Options configure a Service. Every field documents its zero value.
type Options struct {
	// NoQueue: do not run the queue. Entries are still queued (durably) and
	// wait for a Service that runs it, or for Process. false (the default)
	// runs it as the engine's background work, so Close stops it.
	NoQueue bool
	// Logger receives operational logs. nil means the engine's.
	Logger *slog.Logger
}

// Service records the payments that ingest paths read from the chain: x402
// settlements reported by a facilitator or resource server, and plain USDC
// transfers. Create one per engine with New.
type Service struct {
	e     *fiscal.Engine
	log   *slog.Logger
	clock func() time.Time
	mu    sync.Mutex    // one queue pass at a time
	wake  chan struct{} // nudges the queue loop after an enqueue
}

// New returns the ingest service of e and, unless opts.NoQueue, runs its
// durable queue as background work of the engine. It is Open for a caller
// that opens one runner per engine, as a program does once at start: a
// second runner on one engine is a programming error, and New panics with
// Open's error (as net/http's ServeMux does on a pattern registered twice).
// Use Open where the engine may already run one.
func New(e *fiscal.Engine, opts Options) *Service {
	s, err := Open(e, opts)
	if err != nil {
		panic(err)
	}
	return s
}

// Open is New with the refusal returned. One engine has one queue runner:
// a second Open (or New) without NoQueue on the same engine, while the
// engine is open, is refused with an error wrapping ledger.ErrReserved
// (two loops would take the same queue entries side by side); keep the
// Service the first call returned. Services with NoQueue (which queue and
// record, and leave the queue to the runner) may be opened beside it. The
// same rule holds for rates.New and webhooks.New.
func Open(e *fiscal.Engine, opts Options) (*Service, error) {
	set := e.Settings()
	s := &Service{e: e, log: opts.Logger, clock: set.Clock, wake: make(chan struct{}, 1)}
	if s.log == nil {
		s.log = set.Logger
	}
	if !opts.NoQueue {
		if _, err := Reserve(e); err != nil {
			return nil, err
		}
		e.Go(s.run)
	}
	return s, nil
}

// Reserve takes the engine's queue runner as Open does, with Open's
// refusal, for a caller that must know the queue is free before it starts
// other background work that only closing the engine stops (httpserver.New
// makes the webhook dispatcher while it holds it). Release it right before
// Open: a runner is the Open's.
func Reserve(e *fiscal.Engine) (release func(), err error) {
	release, err = e.Ledger().Reserve(queueRunner)
	if err != nil {
		return nil, fmt.Errorf("ingest: the engine's queue already runs under an earlier ingest.New or Open (one queue runner per engine: keep its Service, or set Options.NoQueue for another): %w", err)
	}
	return release, nil
}

// queueRunner is the queue loop's reservation in the engine's ledger
// (ledger.Reserve): one runner per engine.
const queueRunner = "ingest.queue"

// X402 is one settled x402 payment as a facilitator or resource server
// reports it: the account it was paid to, the three x402 documents
// (package x402), what the merchant attests about the buyer (x402 carries
// none of it), and an optional Idempotency-Key.
type X402 struct {
	Account        string
	Settlement     x402.Settlement
	Buyer          fiscal.BuyerFacts
	IdempotencyKey string
}

// Transfer is a plain USDC transfer (protocol evm-transfer, scheme
// erc20-transfer): the ERC-20 Transfer log at LogIndex (the block-level log
// index) of transaction TxHash on Network, paid to Account.
type Transfer struct {
	Account        string
	Network        string
	TxHash         string
	LogIndex       uint64
	Buyer          fiscal.BuyerFacts
	IdempotencyKey string
}

// Result is the answer of RecordX402, EnqueueX402 and RecordTransfer.
type Result struct {
	Outcome fiscal.Outcome
	Record  *fiscal.Record // Created, Replayed, Existing
	JSON    []byte         // the record exactly as stored (Created, Replayed, Existing)
	Queued  *Status        // Queued: the durable queue entry
	// Replayed (Outcome Queued): the answer replays the request that
	// queued the entry, repeated under the same Idempotency-Key with the
	// same documents and buyer facts while the entry is still queued; the
	// HTTP answer carries Idempotent-Replayed: true, as every replay does.
	// (A recorded payment's replay is Outcome fiscal.Replayed.)
	Replayed bool
}

func result(sr *fiscal.SettleResult) *Result {
	return &Result{Outcome: sr.Outcome, Record: sr.Record, JSON: sr.JSON}
}

// RecordX402 records an x402 payment from the documents an x402 resource
// server or facilitator holds after settling. Each document is raw JSON as
// the x402 Go SDK hands it to its after-settle hooks, or the base64 header
// value.
//
// The payment is read from the documents (x402 v2, and the v1 names
// maxAmountRequired and "base"/"ethereum"): scheme exact only
// (UNSUPPORTED_SCHEME), a supported network (UNSUPPORTED_NETWORK), the
// network's USDC contract as asset (UNSUPPORTED_ASSET), the amount from the
// settle response when it has one, else from the requirements. The
// documents are claims: the payment is then verified on chain (the
// network's chain mode must be "required", else
// CHAIN_VERIFICATION_REQUIRED), and the record's time is the block's,
// because x402 carries none.
//
// Answers:
//   - success:false is NOT_SETTLED (422) and nothing is written, except
//   - success:false with errorReason "settlement_pending" and a transaction
//     hash: the payment is held in the durable queue (Outcome Queued, see
//     EnqueueX402), to be recorded once the chain has it;
//   - a recorded payment answers Created, or Existing / Replayed as
//     fiscal.Books.Settle does (one record per (network, tx hash) and per
//     transfer log, across all accounts);
//   - the request of a payment still queued, repeated under its
//     Idempotency-Key, is a replay: Outcome Queued with the entry, without
//     asking the chain (the key held by another payment's entry, or by this
//     payment's with other facts, is IDEMPOTENCY_CONFLICT);
//   - a chain that contradicts the documents is CHAIN_VERIFY_FAILED (422);
//     a chain that cannot be asked or is not final yet is CHAIN_UNAVAILABLE
//     (503, Retry-After) and nothing is written: retry, or use EnqueueX402.
func (s *Service) RecordX402(ctx context.Context, in X402) (*Result, error) {
	b, p, buyer, pending, err := s.parseX402(in)
	if err != nil {
		return nil, err
	}
	if pending {
		return s.enqueue(ctx, b, p, buyer, in.IdempotencyKey, reasonSettlementPending)
	}
	return s.record(ctx, b, s.x402Ingest(p, buyer, in.IdempotencyKey))
}

// parseX402 does every check of an x402 report that needs neither the
// ledger nor the chain.
func (s *Service) parseX402(in X402) (*fiscal.Books, x402.Payment, fiscal.BuyerFacts, bool, error) {
	var none x402.Payment
	b, err := s.e.Books(in.Account)
	if err != nil {
		return nil, none, fiscal.BuyerFacts{}, false, err
	}
	if err := wire.IdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, none, fiscal.BuyerFacts{}, false, fiscal.InputError(err)
	}
	p, pending, err := usdcParser().Parse(in.Settlement)
	if err != nil {
		return nil, none, fiscal.BuyerFacts{}, false, x402Error(err)
	}
	buyer, err := in.Buyer.Normalised()
	if err != nil {
		return nil, none, fiscal.BuyerFacts{}, false, fiscal.InputError(err)
	}
	if err := s.requireChain(p.Network, "/settleResponse/network", ProtocolX402); err != nil {
		return nil, none, fiscal.BuyerFacts{}, false, err
	}
	return b, p, buyer, pending, nil
}

// x402Error maps an error of package x402 to the engine's codes.
func x402Error(err error) error {
	var xe *x402.Error
	if !errors.As(err, &xe) {
		return err
	}
	fe := &fiscal.Error{Code: fiscal.CodeBadRequest, Field: xe.Field, Detail: xe.Detail}
	switch xe.Kind {
	case x402.UnsupportedProtocol:
		fe.Code = CodeUnsupportedProtocol
	case x402.UnsupportedScheme:
		fe.Code = fiscal.CodeUnsupportedScheme
	case x402.UnsupportedNetwork:
		fe.Code = fiscal.CodeUnsupportedNetwork
	case x402.UnsupportedAsset:
		fe.Code = fiscal.CodeUnsupportedAsset
	case x402.NotSettled:
		fe.Code = CodeNotSettled
		if xe.Message != "" {
			fe.Err = fmt.Errorf("facilitator: %s", xe.Message)
		}
	}
	return fe
}

// usdcParser reads x402 settlements of USDC on the supported networks
// (evmverify's contract table).
func usdcParser() x402.Parser {
	assets := map[string]string{}
	for _, n := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum} {
		assets[n], _ = evmverify.USDCContract(n)
	}
	return x402.Parser{Assets: assets}
}

func supportedNetworks() string {
	nets := []string{evmverify.NetworkBase, evmverify.NetworkEthereum}
	slices.Sort(nets)
	return strings.Join(nets, ", ")
}

// x402Ingest is the chain read of an x402 payment: evmverify.Verify of the
// claim the documents make (asset, payer, payTo, amount, and the EIP-3009
// authorization nonce when the payload has one, which the transaction's
// AuthorizationUsed event must name), which finds the one matching
// Transfer log and reads its block.
func (s *Service) x402Ingest(p x402.Payment, buyer fiscal.BuyerFacts, idemKey string) chainJob {
	amount, _ := new(big.Int).SetString(p.AmountAtomic, 10) // validated by x402.Parse
	claim := evmverify.Claim{Network: p.Network, TxHash: p.TxHash, Asset: p.Asset, Payer: p.Payer, Receiver: p.PayTo, Amount: amount, Nonce: p.Nonce}
	usdc := decimal.NewFromBigInt(amount, -evmverify.USDCDecimals)
	chain := s.e.Settings().Chain
	return chainJob{
		Network:  p.Network,
		TxHash:   p.TxHash,
		TxField:  "/settleResponse/transaction",
		Buyer:    buyer,
		Protocol: ProtocolX402,
		Scheme:   x402.SchemeExact,
		X402:     &fiscal.RecordX402{Version: p.Version, ResourceURL: p.ResourceURL, TransferMethod: p.Method, Nonce: p.Nonce},
		// What the documents say the transfer was: a record of the
		// transaction already in the ledger must be that transfer.
		Claimed:        &fiscal.Payment{Amount: usdc, AmountString: usdc.String(), PayerWallet: p.Payer, ReceiverWallet: p.PayTo},
		IdempotencyKey: idemKey,
		Fingerprint:    fingerprint(ProtocolX402, p, buyer),
		Facts:          paymentFacts(p, buyer),
		Read:           func(ctx context.Context) (evmverify.Facts, error) { return chain.Verify(ctx, claim) },
	}
}

// fingerprint hashes the normalised input of an ingest, for the
// Idempotency-Key claim and the queue: the same payment reported again with
// the same buyer facts is the same request, whatever its spelling.
func fingerprint(kind string, input any, buyer fiscal.BuyerFacts) []byte {
	return hash(struct {
		Kind  string            `json:"kind"`
		Input any               `json:"input"`
		Buyer fiscal.BuyerFacts `json:"buyer"`
	}{kind, input, buyer})
}

// paymentFacts hashes what an x402 report says about the payment itself:
// network, transaction, asset, amount, payer and payee, and the buyer
// facts; not what only the documents add (x402 version, resource URL,
// transfer method, EIP-3009 nonce), which one hook has and another may
// not (a report without the payment payload: x402/doc.go). Two reports
// with the same facts are the same payment, as a recorded one answers
// Existing to both (fiscal.Books.Recorded compares amount, payer and
// receiver), so the queue holds one entry for them rather than calling
// the second a conflict; unless both name an EIP-3009 nonce and the nonces
// differ (enqueue): two authorizations are two payments.
func paymentFacts(p x402.Payment, buyer fiscal.BuyerFacts) []byte {
	p.Version, p.ResourceURL, p.Method, p.Nonce = 0, "", "", ""
	return fingerprint(ProtocolX402+" facts", p, buyer)
}

// record answers from the ledger when the payment is already recorded,
// else from the queue when an entry holds its Idempotency-Key (queuedKey:
// another payment's is a conflict, this request's own queued entry the
// replay's answer), else reads it from the chain and records it (ingest).
func (s *Service) record(ctx context.Context, b *fiscal.Books, in chainJob) (*Result, error) {
	read := in.Read
	in.Read = nil
	res, err := s.ingest(ctx, b, in)
	if err != nil || res != nil {
		return resultOrErr(res, err)
	}
	if !in.FromQueue {
		if st, err := s.queuedKey(b.Account().ID, in); err != nil {
			return nil, err
		} else if st != nil {
			return &Result{Outcome: fiscal.Queued, Queued: st, Replayed: true}, nil
		}
	}
	in.Read = read
	return resultOrErr(s.ingest(ctx, b, in))
}

// chainJob is a payment an ingest path reads from the chain: where to find it,
// what the merchant attests about the buyer, and what the way in adds to
// the record and to the ledger transaction.
type chainJob struct {
	Network, TxHash string
	// LogIndex is the transfer log, when the caller knows it before reading
	// the chain (evm-transfer): one log backs at most one record.
	LogIndex *uint64
	// TxField is the JSON pointer of the tx hash in the caller's input, for
	// errors about the transaction.
	TxField string
	Buyer   fiscal.BuyerFacts
	// Protocol and Scheme name the way in ("x402"/"exact",
	// "evm-transfer"/"erc20-transfer").
	Protocol, Scheme string
	X402             *fiscal.RecordX402
	// Claimed is the payment as the documents state it (x402), checked
	// against a recorded one (fiscal.Books.Recorded); nil for a way in
	// that claims only the transaction.
	Claimed        *fiscal.Payment
	IdempotencyKey string
	// Fingerprint identifies the caller's normalised input for the
	// Idempotency-Key claim: the same key with another fingerprint is an
	// IDEMPOTENCY_CONFLICT.
	Fingerprint []byte
	// Facts identifies the payment an x402 report states (paymentFacts),
	// for a queue entry reported again; nil for the other ways in.
	Facts []byte
	// Read reads the payment from the chain. nil: ingest only answers from
	// the ledger, (nil, nil) when the payment is not recorded yet.
	Read func(ctx context.Context) (evmverify.Facts, error)
	// Puts are written in the record's own transaction (the final state of
	// a queue entry, so that it is never lost and never recorded twice).
	Puts []ledger.Put
	// FromQueue: the queue's own attempt at its entry, whose key the entry
	// holds for it (record does not answer it from the queue).
	FromQueue bool
}

// ingest records a payment whose facts come from the chain: it answers
// duplicates and replays from the ledger first (before any chain read,
// fiscal.Books.Recorded), then reads the payment with j.Read and records
// it exactly as Settle would (fiscal.Books.SettlePayment), with the
// chain's amount, payer, receiver and block time. The network's chain mode
// must be "required" (CHAIN_VERIFICATION_REQUIRED otherwise): x402
// documents are claims, not proof, and carry no settlement time.
//
// Its claims are those of a settlement (Draft.ClaimPayment): the
// Idempotency-Key, one per (network, tx hash) across all accounts and
// ways in, and one per transfer log.
func (s *Service) ingest(ctx context.Context, b *fiscal.Books, j chainJob) (*fiscal.SettleResult, error) {
	if err := otherAuthorization(b, j); err != nil {
		return nil, err
	}
	res, err := b.Recorded(j.Network, j.TxHash, j.IdempotencyKey, j.Fingerprint, j.Claimed)
	if err != nil {
		return nil, err
	}
	if res != nil {
		if li := res.Record.Settlement.LogIndex; j.LogIndex != nil && li != nil && *li != int64(*j.LogIndex) {
			// One record per transaction: the transaction's record was
			// made from another of its logs, so this log's transfer is not
			// the payment recorded.
			return nil, &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: "/logIndex", Detail: fmt.Sprintf(
				"this transaction is already recorded (%s) from its log %d; a transaction backs one record", res.Record.ID, *li)}
		}
		return res, nil
	}
	if j.Read == nil {
		return nil, nil
	}
	if err := s.requireChain(j.Network, j.TxField, j.Protocol); err != nil {
		return nil, err
	}
	facts, err := j.Read(ctx)
	if err != nil {
		err = fiscal.ChainError(err)
		var fe *fiscal.Error
		if errors.As(err, &fe) && fe.Code == fiscal.CodeChainVerifyFailed {
			cp := *fe
			cp.Field = j.TxField
			return nil, &cp
		}
		return nil, err
	}
	p, err := paymentFromChain(j, facts, s.e.Now().UTC())
	if err != nil {
		return nil, err
	}
	account := b.Account().ID
	queueKey := []byte(fiscal.EventID(j.Network, j.TxHash))
	return b.SettlePayment(ctx, p, fiscal.Verification{Chain: "verified", Facts: &facts}, func(d *fiscal.Draft) {
		d.Record.X402 = j.X402
		d.Puts = append(d.Puts, j.Puts...)
		d.ClaimPayment(j.IdempotencyKey, j.Fingerprint)
		// A payment acknowledged to another account's queue is that
		// account's: checked in the committer, so that no direct record
		// races it (a review found the queued entry then failing for good).
		d.OnCommit([]ledger.SideKey{{Bucket: bucketQueue, Key: queueKey}}, func(h *ledger.Hook) error {
			raw, err := h.Get(bucketQueue, queueKey)
			if err != nil || raw == nil {
				return err
			}
			var q queued
			if json.Unmarshal(raw, &q) == nil && q.Status.State == StateQueued && q.Status.Account != account {
				return queuedForAnother(j.TxField)
			}
			return nil
		})
	})
}

// otherAuthorization refuses an x402 report naming an EIP-3009 nonce for a
// transaction recorded under another one: the recorded transaction used
// its own authorization (evmverify checked its AuthorizationUsed event),
// so it is not this report's payment (EIP-3009,
// https://eips.ethereum.org/EIPS/eip-3009: one authorization, one
// transfer). It answers PAYMENT_CONFLICT as a duplicate stating other
// facts does (fiscal samePayment), and before the ledger answers the
// report, so that no Idempotency-Key is bound to the other payment's
// record. A record without a nonce (evm-transfer, a report without the
// payload) has nothing to compare.
func otherAuthorization(b *fiscal.Books, j chainJob) error {
	if j.X402 == nil || j.X402.Nonce == "" {
		return nil
	}
	res, err := b.Recorded(j.Network, j.TxHash, "", nil, nil) // reads only: no key, no facts
	if err != nil || res == nil || res.Record.X402 == nil || res.Record.X402.Nonce == "" || res.Record.X402.Nonce == j.X402.Nonce {
		return nil // another account's record, or none: the ledger's answer follows
	}
	return &fiscal.Error{Code: fiscal.CodePaymentConflict, Field: "/paymentPayload/payload/authorization/nonce", Detail: fmt.Sprintf(
		"this (network, txHash) payment is already recorded as %s, made by the EIP-3009 authorization with nonce %s; this report names nonce %s; nothing was written",
		res.Record.ID, res.Record.X402.Nonce, j.X402.Nonce)}
}

// zeroAddress is the address a mint comes from and a burn goes to, as
// evmverify.Facts writes addresses (lower case).
const zeroAddress = "0x0000000000000000000000000000000000000000"

// paymentFromChain builds the payment an ingest path read from the chain,
// through the same validation as POST /settlements
// (fiscal.SettlementRequest.Payment): amount, payer, receiver and time are
// the Transfer log's and its block's; the buyer facts are the merchant's.
func paymentFromChain(j chainJob, f evmverify.Facts, now time.Time) (fiscal.Payment, error) {
	amount, ok := new(big.Int).SetString(f.Amount, 10)
	if !ok {
		return fiscal.Payment{}, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the chain facts carry an unreadable amount", Err: fmt.Errorf("amount %q", f.Amount)}
	}
	if amount.Sign() <= 0 {
		return fiscal.Payment{}, badRequest("/logIndex", "the Transfer at log %d moves 0 USDC: it is not a payment", f.LogIndex)
	}
	// A Transfer from the zero address is a mint (the issuer creating
	// USDC), one to it a burn (ERC-20 implementations, Circle's FiatToken
	// among them, emit them so): no buyer pays for a supply in either.
	if f.From == zeroAddress || f.To == zeroAddress {
		kind := "mint (from"
		if f.To == zeroAddress {
			kind = "burn (to"
		}
		return fiscal.Payment{}, badRequest("/logIndex", "the Transfer at log %d is a %s the zero address): USDC created or destroyed, not a payment for a supply", f.LogIndex, kind)
	}
	req := fiscal.SettlementRequest{
		AmountUSDC:         decimal.NewFromBigInt(amount, -evmverify.USDCDecimals).String(),
		TxHash:             j.TxHash,
		Timestamp:          f.BlockTime.UTC().Format(time.RFC3339),
		PayerWallet:        f.From,
		ReceiverWallet:     f.To,
		Network:            j.Network,
		Asset:              settlement.AssetUSDC, // each path's Read accepts only the network's USDC contract
		ConsumerCountry:    j.Buyer.Country,
		ConsumerVATNumber:  j.Buyer.VATNumber,
		ConsumerName:       j.Buyer.Name,
		ConsumerPostalCode: j.Buyer.PostalCode,
		SupplyKind:         j.Buyer.SupplyKind,
		Description:        j.Buyer.Description,
		ConsumerAddress:    j.Buyer.Address,
		// Every fact the merchant states about the buyer decides, as for
		// POST /settlements: the items of the customer's location (Art.
		// 24b, 24f Implementing Regulation 282/2011), the attested rate
		// conditions and an electronic interface's underlying provider
		// (Art. 9a) were accepted and then dropped here.
		LocationEvidence:   j.Buyer.Evidence,
		RateConditions:     j.Buyer.Conditions,
		UnderlyingProvider: j.Buyer.Provider,
	}
	// The block time is the chain's, not a claim: an engine clock behind
	// the chain's must not make a confirmed payment "in the future" (a
	// review found such entries failed for good).
	p, err := req.Payment(later(now, f.BlockTime))
	if err != nil {
		return fiscal.Payment{}, fiscal.InputError(err) // the leaf's field errors as *fiscal.Error
	}
	p.Protocol, p.Scheme = j.Protocol, j.Scheme
	return p, nil
}

// requireChain refuses an ingest path on a network whose chain mode is not
// "required": x402 documents carry no settlement time and are claims, not
// proof, and evm-transfer reads the payment from the chain; neither has
// facts to record without it.
func (s *Service) requireChain(network, field, protocol string) error {
	if chain := s.e.Settings().Chain; chain != nil && chain.Mode(network) == evmverify.ModeRequired {
		return nil
	}
	return &fiscal.Error{Code: fiscal.CodeChainVerifyRequired, Field: field, Detail: fmt.Sprintf(
		"%s ingest takes the payment's facts and time from the chain, but chain verification is off for %s; configure an RPC endpoint with mode required, or record the payment with merchant-attested facts (Settle, POST /settlements)", protocol, network)}
}

func resultOrErr(res *fiscal.SettleResult, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return result(res), nil
}

// RecordTransfer records a plain USDC transfer (protocol evm-transfer,
// scheme erc20-transfer; ingested through this library only, not over
// HTTP): the Transfer log is
// read from the chain (evmverify.Verifier.ReadTransfer), which supplies
// amount, payer, receiver and time; the log must be emitted by the
// network's USDC contract. The network's chain mode must be "required"
// (CHAIN_VERIFICATION_REQUIRED otherwise), and its policy's depth applies.
//
// The chain proves that the transfer happened, not that its receiver is the
// account's wallet: that remains the merchant's attestation, as
// receiverWallet is on POST /settlements. One record per (network, tx hash)
// and per log: a transaction already recorded, by any path, answers
// Existing (this account, this log or no log recorded) or
// SETTLEMENT_CONFLICT (another account, or another log of the transaction).
func (s *Service) RecordTransfer(ctx context.Context, t Transfer) (*Result, error) {
	b, err := s.e.Books(t.Account)
	if err != nil {
		return nil, err
	}
	if err := wire.IdempotencyKey(t.IdempotencyKey); err != nil {
		return nil, fiscal.InputError(err)
	}
	if _, ok := evmverify.USDCContract(t.Network); !ok {
		field := "/network"
		if t.Network == "" {
			return nil, badRequest(field, "is required (CAIP-2, e.g. %q)", evmverify.NetworkBase)
		}
		return nil, &fiscal.Error{Code: fiscal.CodeUnsupportedNetwork, Field: field, Detail: fmt.Sprintf("network %s is not supported; supported: %s", shown.Quote(t.Network), supportedNetworks())}
	}
	hash, err := evmverify.ParseTxHash(t.TxHash)
	if err != nil {
		return nil, badRequest("/txHash", "must be 0x followed by 64 hexadecimal digits")
	}
	buyer, err := t.Buyer.Normalised()
	if err != nil {
		return nil, fiscal.InputError(err)
	}
	if err := s.requireChain(t.Network, "/network", ProtocolEVMTransfer); err != nil {
		return nil, err
	}
	li := t.LogIndex
	chain := s.e.Settings().Chain
	network := t.Network
	return s.record(ctx, b, chainJob{
		Network:  network,
		TxHash:   hash,
		TxField:  "/txHash",
		LogIndex: &li,
		Buyer:    buyer,
		Protocol: ProtocolEVMTransfer,
		Scheme:   SchemeERC20Transfer,
		Fingerprint: fingerprint(ProtocolEVMTransfer, struct {
			Network  string `json:"network"`
			TxHash   string `json:"txHash"`
			LogIndex uint64 `json:"logIndex"`
		}{network, hash, li}, buyer),
		IdempotencyKey: t.IdempotencyKey,
		Read: func(ctx context.Context) (evmverify.Facts, error) {
			return chain.ReadTransfer(ctx, network, hash, li)
		},
	})
}

// hash is the SHA-256 of v's JSON encoding.
func hash(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
}

// later is the later of two instants.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// queuedForAnother is the answer to a payment whose transaction another
// account's queue entry holds.
func queuedForAnother(field string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: field, Detail: "this (network, txHash) settlement is already queued for another account"}
}

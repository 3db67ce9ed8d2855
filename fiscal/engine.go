package fiscal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vies"
)

// Config configures an Engine. Every field documents its zero value.
type Config struct {
	// DataDir holds the ledger file (ledger.db) and the key files (keys/),
	// created on first use. Required.
	DataDir string
	// Accounts are the merchant accounts. Required (may be empty for a
	// read-only engine, but then nothing can be settled).
	Accounts *Accounts
	// LogOrigin names the Merkle log in its checkpoints (the C2SP origin and
	// the log key's name). "" means DefaultLogOrigin. It cannot change once
	// the ledger exists.
	LogOrigin string
	// FX answers ECB reference rates. nil means the embedded ECB snapshot.
	FX fx.Source
	// FXPolicy selects the ECB publication per record. "" means
	// fx.ForDayOrPrevious (Art. 91(2) VAT Directive).
	FXPolicy fx.Policy
	// VIES looks up buyers' VAT numbers. nil means no registry is asked: a
	// settlement with a consumerVatNumber is stored PENDING_MANUAL_REVIEW
	// (reason vat_number_unverified), never reverse-charged on trust.
	VIES vies.Checker
	// Chain verifies settlements on chain. nil means verification is not
	// performed (and each record says so).
	Chain *evmverify.Verifier
	// Clock returns the current time. nil means time.Now.
	Clock func() time.Time
	// Rand is the source of randomness for new keys and sandbox record ids.
	// nil means crypto/rand.
	Rand io.Reader
	// Logger receives operational logs. nil means slog.Default().
	Logger *slog.Logger
	// Pricing is the pricing policy whose fee each record accrues. nil
	// means DefaultPricing() (spec §8: beta, 0 bps).
	Pricing *Pricing
	// Recheck bounds the background re-check of VAT numbers the registry
	// could not confirm (review.go). The zero value means its defaults.
	Recheck RecheckPolicy
	// Webhooks configures webhook delivery; the zero value delivers to
	// public https endpoints (see WebhookOptions).
	Webhooks WebhookOptions
}

// DefaultLogOrigin is the log origin when Config.LogOrigin is empty.
const DefaultLogOrigin = "fiscal402.localhost/log"

// Engine turns settled payments into fiscal records. It is safe for
// concurrent use; create one per data directory with New and Close it.
type Engine struct {
	accounts *Accounts
	ledger   *ledger.Ledger
	keyring  *receipt.Keyring
	logVKey  string
	origin   string
	fx       fx.Source
	fxPolicy fx.Policy
	vies     vies.Checker
	chain    *evmverify.Verifier
	clock    func() time.Time
	log      *slog.Logger
	pricing  Pricing
	recheck  RecheckPolicy
	stop     chan struct{} // closed by Close: stops background loops
	loops    []chan struct{}
	ingest   *ingestQueue
	sandbox  *sandbox // the sandbox environment: its own ledger, log key and receipt keys
	webhooks *webhooks
}

// New opens (or creates) the engine's data directory: the ledger file, the
// receipt signing keyring and the log key, and the sandbox environment in
// <DataDir>/sandbox (its own ledger, log key and receipt keyring).
func New(cfg Config) (*Engine, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("fiscal: Config.DataDir is required")
	}
	if cfg.Accounts == nil {
		return nil, errors.New("fiscal: Config.Accounts is required")
	}
	e := &Engine{
		accounts: cfg.Accounts,
		origin:   cfg.LogOrigin,
		fx:       cfg.FX,
		fxPolicy: cfg.FXPolicy,
		vies:     cfg.VIES,
		chain:    cfg.Chain,
		clock:    cfg.Clock,
		log:      cfg.Logger,
		ingest:   newIngestQueue(),
	}
	if e.origin == "" {
		e.origin = DefaultLogOrigin
	}
	if e.fxPolicy == "" {
		e.fxPolicy = fx.ForDayOrPrevious
	}
	if e.clock == nil {
		e.clock = time.Now
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.pricing = DefaultPricing()
	if cfg.Pricing != nil {
		e.pricing = *cfg.Pricing
	}
	e.recheck = cfg.Recheck.withDefaults()
	e.stop = make(chan struct{})
	rnd := cfg.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	if e.fx == nil {
		t, err := fx.Embedded()
		if err != nil {
			return nil, fmt.Errorf("fiscal: embedded ECB rates: %w", err)
		}
		e.fx = t
	}
	keyDir := filepath.Join(cfg.DataDir, "keys")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return nil, fmt.Errorf("fiscal: data dir: %w", err)
	}
	var err error
	if e.keyring, err = receipt.OpenKeyring(keyDir, "production", e.clock(), rnd); err != nil {
		return nil, fmt.Errorf("fiscal: receipt keys: %w", err)
	}
	signer, vkey, err := ledger.LoadOrCreateLogKey(filepath.Join(keyDir, "log.key"), e.origin)
	if err != nil {
		return nil, fmt.Errorf("fiscal: log key: %w", err)
	}
	e.logVKey = vkey
	if e.ledger, err = ledger.Open(filepath.Join(cfg.DataDir, "ledger.db"), ledger.Options{Origin: e.origin, Signer: signer}); err != nil {
		return nil, fmt.Errorf("fiscal: ledger: %w", err)
	}
	if e.sandbox, err = openSandbox(filepath.Join(cfg.DataDir, "sandbox"), e.origin, e.clock(), rnd); err != nil {
		e.ledger.Close()
		return nil, err
	}
	if e.webhooks, err = newWebhooks(e, cfg.Webhooks, keyDir, rnd); err != nil {
		errors.Join(e.ledger.Close(), e.sandbox.close())
		return nil, err
	}
	if e.vies != nil && e.recheck.Interval > 0 {
		e.startLoop(e.runRecheckLoop)
	}
	return e, nil
}

// startLoop runs a background loop until Close.
func (e *Engine) startLoop(loop func(stop <-chan struct{}, done chan<- struct{})) {
	done := make(chan struct{})
	e.loops = append(e.loops, done)
	go loop(e.stop, done)
}

// Close stops webhook delivery (attempts in flight are abandoned and resume
// on the next start) and the background loops, waits for in-flight appends
// and closes the ledger and the sandbox ledger. It is safe to call more than
// once.
func (e *Engine) Close() error {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	e.webhooks.close()
	for _, done := range e.loops {
		<-done
	}
	return errors.Join(e.ledger.Close(), e.sandbox.close())
}

// Accounts returns the engine's merchant accounts.
func (e *Engine) Accounts() *Accounts { return e.accounts }

// Ledger returns the engine's ledger, for read access (proofs, checks).
func (e *Engine) Ledger() *ledger.Ledger { return e.ledger }

// LogVerifierKey is the note verifier key of the Merkle log
// ("origin+hash+base64"), which auditors need to check checkpoints.
func (e *Engine) LogVerifierKey() string { return e.logVKey }

// JWKS returns the JSON Web Key Set of every receipt signing key the service
// has used, active and retired, with their validity windows.
func (e *Engine) JWKS() ([]byte, error) { return json.Marshal(e.keyring.KeySet()) }

// Outcome says how Settle answered.
type Outcome int

const (
	// Created: a new record was appended to the ledger.
	Created Outcome = iota
	// Replayed: the Idempotency-Key was seen before with the same body; the
	// original record is returned (spec §4 "Idempotency" 2).
	Replayed
	// Existing: the (network, txHash) pair was already recorded for this
	// account; the existing record is returned (spec §4 "Idempotency" 4).
	Existing
	// Queued: an x402 settlement was durably queued for ingest (it is
	// pending on chain, or the caller asked for asynchronous ingest);
	// nothing is recorded yet (see IngestX402).
	Queued
)

// SettleResult is the answer of Settle.
type SettleResult struct {
	Outcome Outcome
	Record  *Record
	JSON    []byte // the record exactly as stored and served
}

// EventID derives the event id of a settlement from (network, lower-case tx
// hash), so that replicas and replays agree (DESIGN.md "Identifiers").
func EventID(network, txHash string) string {
	h := sha256.Sum256([]byte(network + ":" + txHash))
	return "x402-" + hex.EncodeToString(h[:16])
}

// ReceiptID is the receipt id of an event id (spec §2.5).
func ReceiptID(eventID string) string { return "rcpt_" + eventID }

// Settle turns a settled payment into a fiscal record for the account with
// the given id. The idempotency key is optional ("" for none). A nil error
// means the record is durably in the ledger (fsynced) with its receipt.
//
// It validates the request, answers duplicates and idempotent replays from
// the ledger, optionally verifies the payment on chain, classifies it for
// VAT, converts it to EUR, renders the UBL invoice, and appends record,
// invoice and receipt to the ledger in one transaction (DESIGN.md "Data flow").
func (e *Engine) Settle(ctx context.Context, accountID string, req SettlementRequest, idempotencyKey string) (*SettleResult, error) {
	acc, ok := e.accounts.Get(accountID)
	if !ok {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	now := e.clock().UTC()
	s, err := req.validate(now)
	if err != nil {
		return nil, err
	}
	if s.SupplyKind == "" {
		s.SupplyKind = acc.Seller.SupplyKind
	}
	if s.Description == "" {
		s.Description = acc.Seller.ItemName
	}
	claims := settlementClaims(acc.ID, s, idempotencyKey)
	if res, err := e.answerFromLedger(acc.ID, claims); res != nil || err != nil {
		return res, err
	}
	p, err := e.prepare(ctx, acc, s, now)
	if err != nil {
		return nil, err
	}
	return e.append(ctx, withLogClaim(claims, acc.ID, p.record.Settlement), p)
}

// settlementClaims are the unique keys a settlement takes in the ledger, in
// the order they are checked: the Idempotency-Key first (same key with a
// different body must be a conflict even when the payment exists), then the
// payment itself, unique per (network, txHash) across all accounts.
func settlementClaims(accountID string, s settlement, idemKey string) []ledger.Claim {
	var claims []ledger.Claim
	if idemKey != "" {
		claims = append(claims, ledger.Claim{Space: claimIdempotency, Key: accountID + "\x00" + idemKey, Fingerprint: s.fingerprint()})
	}
	return append(claims, ledger.Claim{Space: claimPayment, Key: s.Network + ":" + s.TxHash, Fingerprint: []byte(accountID)})
}

const (
	claimIdempotency = "idem"
	claimPayment     = "payment"
)

// fingerprint identifies the request body for Idempotency-Key comparison. It
// hashes the normalised settlement, so "1.50" and "1.5" or a different key
// order are the same body, while any change of meaning is not.
func (s settlement) fingerprint() []byte {
	b, _ := json.Marshal(struct {
		A, T, Ts, P, R, N, As, Sc, Pr, BC, BP, BV, BN, K, D string
	}{s.Amount.String(), s.TxHash, s.Timestamp.Format(time.RFC3339Nano), s.PayerWallet, s.ReceiverWallet, s.Network,
		s.Asset, s.Scheme, s.Protocol, s.Buyer.Country, s.Buyer.PostalCode, s.Buyer.VATNumber, s.Buyer.Name, s.SupplyKind, s.Description})
	h := sha256.Sum256(b)
	return h[:]
}

// answerFromLedger returns the stored answer when a claim is already held:
// a replay or duplicate of this account, or a conflict. (nil, nil) means the
// settlement is new as far as the committed ledger knows; the append checks
// again atomically.
func (e *Engine) answerFromLedger(accountID string, claims []ledger.Claim) (*SettleResult, error) {
	for _, c := range claims {
		holder, fp, err := e.ledger.ClaimHolder(c.Space, c.Key)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, storeError(err)
		}
		if string(fp) != string(c.Fingerprint) {
			return nil, claimConflict(c)
		}
		return e.storedResult(holder, outcomeOf(c))
	}
	return nil, nil
}

func outcomeOf(c ledger.Claim) Outcome {
	if c.Space == claimIdempotency {
		return Replayed
	}
	return Existing
}

func claimConflict(c ledger.Claim) *Error {
	if c.Space == claimIdempotency {
		return &Error{Code: CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key was already used with a different request body"}
	}
	switch c.Space {
	case claimPaymentLog:
		return &Error{Code: CodeSettlementConflict, Field: "/txHash", Detail: "this transfer log already backs a record of another account"}
	case claimPayment:
		return &Error{Code: CodeSettlementConflict, Field: "/txHash", Detail: "this (network, txHash) settlement is already recorded for another account"}
	}
	// Revision claims carry the entry id as fingerprint, so a concurrent
	// writer of the same revision finds it Existing, never in conflict.
	return &Error{Code: CodeInternal, Detail: "ledger claim conflict", Err: fmt.Errorf("claim %s %q held with another fingerprint", c.Space, c.Key)}
}

// storedResult answers with the current state of the record id.
func (e *Engine) storedResult(id string, o Outcome) (*SettleResult, error) {
	r, raw, err := e.loadRecord(id)
	if err != nil {
		return nil, err
	}
	if r.Object == objectFiscalEvent {
		return nil, alreadyRecorded(r.Object, id)
	}
	return &SettleResult{Outcome: o, Record: r, JSON: raw}, nil
}

// Names of the documents stored with each ledger entry.
const (
	docRecord = "record"
	docUBL    = "ubl"
)

// Ledger index names.
const (
	indexAccountTime = "account-time" // account \x00 createdAt (8-byte big-endian unix nanos) event id → event id
)

func storeError(err error) *Error {
	if errors.Is(err, ledger.ErrUnavailable) || errors.Is(err, ledger.ErrClosed) {
		return &Error{Code: CodeDBUnavailable, Detail: "the ledger cannot be written right now; retry", RetryAfter: time.Second, Err: err}
	}
	return &Error{Code: CodeInternal, Detail: "ledger error", Err: err}
}

// append writes a new record's first entry and answers with the record as
// stored; a claim already held by a concurrent request answers as a replay
// or duplicate would.
func (e *Engine) append(ctx context.Context, claims []ledger.Claim, en *entry) (*SettleResult, error) {
	en.ledgerClaims = claims
	en.postings = append(en.postings, ledger.Posting{Index: indexAccountTime, Key: accountTimeKey(en.record.Account, en.createdAt, en.record.ID)})
	stored, res, err := e.write(ctx, en)
	if err != nil {
		return nil, err
	}
	if res.Existing {
		o := Existing
		for _, c := range claims {
			if holder, _, err := e.ledger.ClaimHolder(c.Space, c.Key); err == nil && holder == res.ID {
				o = outcomeOf(c)
				break
			}
		}
		return e.storedResult(res.ID, o)
	}
	var r Record
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, &Error{Code: CodeInternal, Err: err}
	}
	return &SettleResult{Outcome: Created, Record: &r, JSON: stored}, nil
}

func accountTimeKey(accountID string, t time.Time, id string) []byte {
	k := make([]byte, 0, len(accountID)+1+8+len(id))
	k = append(k, accountID...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(t.UnixNano()))
	return append(k, id...)
}

// Record returns the current state (newest revision) of the account's
// fiscal record id. Another account's
// record is reported as not found, not as forbidden: ids are not secrets,
// but their existence in another account is none of the caller's business.
func (e *Engine) Record(ctx context.Context, accountID, id string) (*Record, []byte, error) {
	r, raw, err := e.loadRecord(id)
	if err != nil {
		return nil, nil, err
	}
	if r.Account != accountID || r.Object == objectFiscalEvent {
		return nil, nil, notFound("settlement " + id)
	}
	return r, raw, nil
}

// Invoice returns the UBL bytes bound to the account's record id and their
// SHA-256 (hex), exactly as stored when the record was made.
func (e *Engine) Invoice(ctx context.Context, accountID, id string) ([]byte, string, error) {
	r, _, err := e.Record(ctx, accountID, id)
	if err != nil {
		return nil, "", err
	}
	if r.Invoice == nil {
		return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("settlement %s has no invoice: it is %s", id, r.ReviewStatus)}
	}
	entryID, err := e.currentEntryID(id)
	if err != nil {
		return nil, "", err
	}
	return storedInvoice(e.ledger, entryID, r.Invoice.UBLSHA256)
}

// Receipt returns the signed receipt JSON (spec service.receipt/1.0.0) with
// the id "rcpt_<event id>", including its proof of inclusion in the log,
// against the checkpoint of the commit that appended it. Receipts are public
// (spec §5.6): whoever holds the id may fetch and verify it.
func (e *Engine) Receipt(ctx context.Context, receiptID string) ([]byte, error) {
	id, ok := strings.CutPrefix(receiptID, "rcpt_")
	if !ok {
		return nil, notFound("receipt " + receiptID)
	}
	ent, err := e.ledger.Entry(id)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, notFound("receipt " + receiptID)
	}
	if err != nil {
		return nil, storeError(err)
	}
	if !isReceiptLeaf(ent.Leaf) {
		return nil, notFound("receipt " + receiptID + " (a fiscal event outside the EU VAT production invariants has no receipt)")
	}
	cp, err := e.ledger.CoveringCheckpoint(ent.Index)
	if err != nil {
		return nil, storeError(err)
	}
	proof, err := e.ledger.InclusionProof(ent.Index, cp.Size)
	if err != nil {
		return nil, storeError(err)
	}
	return receipt.Assemble(string(ent.Leaf), ent.Index, proof, cp.Note)
}

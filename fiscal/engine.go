package fiscal

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/anchor"
	"github.com/fiscal402/fiscal402/internal/syncread"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/recordid"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// Config configures an Engine. Every field documents its zero value.
type Config struct {
	// Dir holds the ledger file (ledger.db) and the key files (keys/),
	// created on first use. Required.
	Dir string
	// Accounts are the sellers the engine keeps books for, one Books each.
	// nil means none (a read-only engine: receipts, proofs).
	Accounts []Account
	// LogOrigin names the Merkle log in its checkpoints (the C2SP origin and
	// the log key's name). "" means DefaultLogOrigin. It cannot change once
	// the ledger exists.
	LogOrigin string
	// Environment is receipt.EnvProduction ("", the default) or
	// receipt.EnvSandbox: a sandbox engine records simulations under random
	// ids, watermarks its invoices and receipts and signs with the
	// "sandbox" keyring (package sandbox runs one).
	Environment string
	// FX answers ECB reference rates. nil means the embedded ECB snapshot.
	FX fx.Source
	// FXPolicy selects the ECB publication per record, unless the seller
	// chooses one (Seller.FXPolicy). "" means fx.LatestPublishedAt: the
	// latest rate the ECB had published at the time of the chargeable
	// event (Art. 91(2) VAT Directive 2006/112/EC; the ECB publishes at
	// about 16:00 CET, so a sale at 08:00 UTC takes the previous day's).
	// New refuses any other than the two fx.RecordPolicy accepts.
	FXPolicy fx.Policy
	// Rates is the VAT rate table every determination uses. nil means the
	// embedded one (vat.Rates); vat.ParseRateTable reads a newer table
	// from a file, e.g. one whose coverage reaches a year the embedded
	// table does not. Accessories read it from Settings.
	Rates *vat.RateTable
	// VIES looks up buyers' VAT numbers. nil means no registry is asked: a
	// settlement with a consumerVatNumber is stored PENDING_MANUAL_REVIEW
	// (reason vat_number_unverified), never reverse-charged on trust.
	VIES vies.Checker
	// Chain verifies settlements on chain. nil means verification is not
	// performed (and each record says so).
	Chain *evmverify.Verifier
	// Clock returns the current time. nil means time.Now.
	Clock func() time.Time
	// Rand is the source of randomness: new keys, the salts of concealed
	// receipt claims, sandbox record ids. nil means crypto/rand. It need
	// not be safe for concurrent use: the engine reads it one caller at a
	// time, and Settings hands accessories that same locked reader.
	Rand io.Reader
	// Logger receives operational logs. nil means slog.Default().
	Logger *slog.Logger
	// Fee is the fee each record accrues under the pricing policy in force
	// (GET /v1/pricing). The zero value accrues 0 bps under "free_during_beta".
	Fee FeePolicy
	// Recheck bounds the background re-check of VAT numbers the registry
	// could not confirm (review.go). The zero value means its defaults.
	Recheck RecheckPolicy
	// CommitObserver, optional, is told of each group commit of the
	// ledger (appends written, time to make them durable): a metrics sink.
	CommitObserver ledger.CommitObserver
	// LedgerFullCheck makes New run the full check (ledger.Check: every
	// page, leaf, hash and checkpoint; then every document a leaf anchors
	// by its digest) before serving instead of the
	// bounded one (the page structure, the latest checkpoint and the newest
	// ledger.OpenCheckLeaves leaves); see ledger's "Opening and damage" for
	// the cost of each. Either refuses a damaged file with an error that
	// errors.Is ledger.ErrCorrupt.
	LedgerFullCheck bool
	// Store is where the ledger lives: "" for the bbolt file ledger.db in
	// Dir, or a postgres:// URL for a PostgreSQL log that several engines
	// (server replicas) share (ledger.OpenPostgres). Every replica needs
	// the same keys (Dir/keys copied to each): the log key, the receipt
	// key and the record-id key are recorded with the log at its first
	// open, and an engine whose keys differ is refused.
	Store string
	// NoBackground: start no background work (registry re-checks, and what
	// accessories register with Go). For maintenance tools that open a data
	// directory; their records wait for the next engine that runs it.
	NoBackground bool
}

// DefaultLogOrigin is the log origin when Config.LogOrigin is empty.
const DefaultLogOrigin = "fiscal402.localhost/log"

// Engine turns settled payments into fiscal records for its accounts. It is
// safe for concurrent use; create one per data directory with New (or Open
// for a single seller) and Close it.
type Engine struct {
	cfg      Config                            // with defaults applied
	accounts atomic.Pointer[map[string]*Books] // one shared Books per account, replaced whole by SetAccounts
	ledger   *ledger.Ledger
	totals   totalsCache // the Art. 59c running totals last read or committed (totals.go)
	keyring  *receipt.Keyring
	logVKey  string
	ids      *recordid.Keyed // production record ids, under the record-id key
	outbox   *outbox
	rand     *syncread.Reader // Config.Rand, which need not be safe for concurrent use, behind a mutex
	predict  ledger.Predictor // log indexes and invoice numbers predicted before the committer
	// recordSize is the size of the record document sealed last, from
	// which seal sizes the next one's buffer.
	recordSize atomic.Int64
	invoices   ubl.Renderer  // remembers the sellers' checks and party blocks (ubl/doc.go, "Performance")
	sealBufs   sync.Pool     // *sealBufs that committed drafts gave back (Engine.release)
	stop       chan struct{} // closed by Close: stops background work
	// totalLocks serialise an account's sales that lost a race for its
	// Art. 59c running total (totals.go).
	totalLocks sync.Map // account id → *sync.Mutex
	// rechecks are the registry re-check handlers of other record kinds.
	handlersMu sync.Mutex
	rechecks   map[string]func(context.Context, Recheck, time.Time) (bool, error)
	wg         sync.WaitGroup
	closing    sync.Once
}

// New opens (or creates) the engine's data directory: the ledger file, the
// receipt signing keyring and the log key. Unless Config.NoBackground, it
// starts the registry re-check loop (when a registry is configured).
func New(cfg Config) (*Engine, error) {
	if cfg.Dir == "" {
		return nil, errors.New("fiscal: Config.Dir is required")
	}
	if cfg.LogOrigin == "" {
		cfg.LogOrigin = DefaultLogOrigin
	}
	switch cfg.Environment {
	case "":
		cfg.Environment = receipt.EnvProduction
	case receipt.EnvProduction, receipt.EnvSandbox:
	default:
		return nil, fmt.Errorf("fiscal: Config.Environment %q: want %q or %q", cfg.Environment, receipt.EnvProduction, receipt.EnvSandbox)
	}
	policy, err := fx.RecordPolicy(cfg.FXPolicy)
	if err != nil {
		return nil, fmt.Errorf("fiscal: Config.FXPolicy %w", err)
	}
	cfg.FXPolicy = policy
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	cfg.Rand, cfg.Logger = cmp.Or(cfg.Rand, rand.Reader), cmp.Or(cfg.Logger, slog.Default())
	cfg.Fee, cfg.Recheck, cfg.Rates = cfg.Fee.withDefaults(), cfg.Recheck.withDefaults(), cmp.Or(cfg.Rates, vat.Rates())
	if cfg.FX == nil {
		t, err := fx.Embedded()
		if err != nil {
			return nil, fmt.Errorf("fiscal: embedded ECB rates: %w", err)
		}
		cfg.FX = t
	}
	e := &Engine{cfg: cfg, rand: syncread.New(cfg.Rand), stop: make(chan struct{})}
	accounts, err := e.accountMap(cfg.Accounts)
	if err != nil {
		return nil, err
	}
	e.accounts.Store(&accounts)
	keyDir := filepath.Join(cfg.Dir, "keys")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return nil, fmt.Errorf("fiscal: data dir: %w", err)
	}
	if e.keyring, err = receipt.OpenKeyring(keyDir, cfg.Environment, cfg.Clock(), e.rand); err != nil {
		return nil, fmt.Errorf("fiscal: %s: %w", keyDir, err)
	}
	if e.ids, err = recordid.LoadOrCreate(keyDir, e.rand); err != nil {
		return nil, fmt.Errorf("fiscal: record-id key: %w", err)
	}
	signer, vkey, err := ledger.LoadOrCreateLogKey(filepath.Join(keyDir, "log.key"), cfg.LogOrigin)
	if err != nil {
		return nil, fmt.Errorf("fiscal: %s: %w", filepath.Join(keyDir, "log.key"), err)
	}
	e.logVKey = vkey
	ledgerPath := filepath.Join(cfg.Dir, "ledger.db")
	// The receipt key cosigns every checkpoint: it signs 4.0.0 receipts
	// through them (receipt doc.go "# Version 4.0.0"), one signature per
	// commit instead of one per receipt. Asked per commit, so a rotated key
	// (or one still held by a receipt on its way) is the one that signs.
	lopts := ledger.Options{Origin: cfg.LogOrigin, Signer: signer, Cosigners: e.keyring.Cosigners, Observer: cfg.CommitObserver, FullCheck: cfg.LedgerFullCheck}
	if cfg.Store == "" {
		e.ledger, err = ledger.Open(ledgerPath, lopts)
	} else {
		lopts.Keys = map[string]string{
			"receipt":   e.keyring.Signer().KeyID(),
			"record-id": e.ids.Fingerprint(),
		}
		ledgerPath = "PostgreSQL log"
		e.ledger, err = ledger.OpenPostgres(context.Background(), cfg.Store, lopts)
	}
	if err != nil {
		return nil, fmt.Errorf("fiscal: %s: %w", ledgerPath, err)
	}
	if cfg.LedgerFullCheck {
		if err := anchor.CheckDocuments(e.ledger, ledgerPath); err != nil {
			e.ledger.Close()
			return nil, fmt.Errorf("fiscal: %s: %w", ledgerPath, err)
		}
	}
	e.outbox = &outbox{}
	if err := e.rebuildTotals(context.Background()); err != nil {
		e.ledger.Close()
		return nil, fmt.Errorf("fiscal: building the Art. 59c running totals: %w", err)
	}
	// A crash between a crossing sale's commit and its event's append left
	// the event queued: append it now.
	e.emitThresholdEvents(context.Background())
	if cfg.VIES != nil && cfg.Recheck.Interval > 0 {
		e.Go(e.runRecheckLoop)
	}
	return e, nil
}

// Open opens the books of one seller in dir, with the embedded ECB rates,
// no registry and no chain verification: the shortest way to embed the
// engine. The books' account id is DefaultAccount. Close the books when
// done; that closes the engine Open made.
//
// The embedded rates end at their snapshot's last publication (fx.Embedded)
// and Open refreshes nothing: a payment settled after it waits for review
// (fx_rate_unavailable). Books taking live payments read an fx.LiveTable
// (New with Config.FX) kept current by rates.New, which also re-decides
// what waited.
func Open(dir string, seller Seller) (*Books, error) {
	e, err := New(Config{Dir: dir, Accounts: []Account{{ID: DefaultAccount, Seller: seller}}})
	if err != nil {
		return nil, err
	}
	b, err := e.Books(DefaultAccount)
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return &Books{e: b.e, acc: b.acc, owned: true}, nil // not the engine's shared Books
}

// DefaultAccount is the account id of the books Open opens.
const DefaultAccount = "default"

// Go runs work until the engine is closed: stop is closed by Close, which
// then waits for work to return before it closes the ledger. Accessories
// (webhook dispatch, ingest queues) run their loops here, so that one Close
// stops everything. With Config.NoBackground, work is not started.
func (e *Engine) Go(work func(stop <-chan struct{})) {
	if e.cfg.NoBackground {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		work(e.stop)
	}()
}

// Close stops the background work started with Go (and waits for it), then
// closes the ledger: in-flight appends finish first. It is safe to call more
// than once.
func (e *Engine) Close() error {
	var err error
	e.closing.Do(func() {
		close(e.stop)
		e.wg.Wait()
		err = e.ledger.Close()
	})
	return err
}

// Books returns the books of the account with the given id.
func (e *Engine) Books(accountID string) (*Books, error) {
	b, ok := (*e.accounts.Load())[accountID]
	if !ok {
		return nil, &Error{Code: CodeNotFound, Detail: fmt.Sprintf("the engine keeps no books for account %q (Config.Accounts)", accountID)}
	}
	return b, nil // read-only, shared: no allocation per request
}

// Accounts returns the engine's accounts, sorted by id.
func (e *Engine) Accounts() []Account {
	m := *e.accounts.Load()
	out := make([]Account, 0, len(m))
	for _, b := range m {
		out = append(out, b.acc)
	}
	slices.SortFunc(out, func(a, b Account) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Settings returns the engine's configuration with its defaults applied,
// for accessories that describe or extend the engine (the capability
// catalog, the sandbox). Accounts are left out: see Accounts. Rand is the
// engine's own locked reader of Config.Rand, so that accessories (webhooks,
// the sandbox engine) read it one at a time with the engine.
func (e *Engine) Settings() Config {
	c := e.cfg
	c.Accounts, c.Rand = nil, e.rand
	return c
}

// Now is the engine's clock.
func (e *Engine) Now() time.Time { return e.cfg.Clock() }

// Ledger returns the engine's ledger: proofs, checks, and the side data of
// accessories.
func (e *Engine) Ledger() *ledger.Ledger { return e.ledger }

// LogVerifierKey is the note verifier key of the Merkle log
// ("origin+hash+base64"), which auditors need to check checkpoints.
func (e *Engine) LogVerifierKey() string { return e.logVKey }

// JWKS returns the JSON Web Key Set of every receipt signing key the engine
// has used, active and retired, with their validity windows.
func (e *Engine) JWKS() ([]byte, error) { return json.Marshal(e.keyring.KeySet()) }

// Receipt returns the receipt JSON with the given id, including its proof
// of inclusion in the log against the checkpoint of the commit that
// appended it: for a 4.0.0 leaf the document with its payload, which that
// checkpoint's receipt-key cosignature signs; for an older leaf the
// document with its JWS. id is a receipt id ("rcpt_<entry id>") or a record id, whose
// current receipt is returned. Receipts are public (no key): whoever
// holds the id may fetch and verify it.
func (e *Engine) Receipt(ctx context.Context, id string) ([]byte, error) {
	entryID, ok := strings.CutPrefix(id, "rcpt_")
	if !ok {
		head, err := e.currentEntryID(id)
		if err != nil {
			return nil, notFoundOr(err, "receipt "+bare(id)+" (a receipt id is rcpt_ followed by the record id)")
		}
		entryID = head
	}
	ent, err := e.ledger.Entry(entryID)
	if err != nil {
		return nil, notFoundOr(err, "receipt "+bare(id))
	}
	// A fiscal event outside the production invariants has no receipt: its
	// leaf is its JSON document ('{', and never a 4.0.0 payload's beginning:
	// seal refuses that); a receipt's leaf is a 4.0.0 payload or a compact
	// JWS (base64url "eyJ").
	if l := ent.Leaf; !receipt.IsLeafV4(l) && (len(l) == 0 || l[0] == '{') {
		return nil, notFound("receipt " + bare(id) + " (a fiscal event outside the EU VAT production invariants has no receipt)")
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

// RotateReceiptKey retires the active production receipt signing key of the
// data directory dir and makes a new one active: the operator's rotation
// step. Run it while no engine has the directory open. The retired key stays
// in the JWKS with its validity window, so every receipt it signed still
// verifies; its private half is deleted. rand nil means crypto/rand. It
// returns the key ids before and after.
func RotateReceiptKey(dir string, now time.Time, rnd io.Reader) (retired, active string, err error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	k, err := receipt.OpenKeyring(filepath.Join(dir, "keys"), receipt.EnvProduction, now, rnd)
	if err != nil {
		return "", "", fmt.Errorf("fiscal: receipt keys: %w", err)
	}
	retired = k.Signer().KeyID()
	if err := k.Rotate(now, rnd); err != nil {
		return "", "", fmt.Errorf("fiscal: rotate receipt key: %w", err)
	}
	return retired, k.Signer().KeyID(), nil
}

// accountLock is the mutex of an account's contended running-total
// decisions.
func (e *Engine) accountLock(accountID string) *sync.Mutex {
	mu, _ := e.totalLocks.LoadOrStore(accountID, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// accountMap validates and normalises accounts and makes their books,
// keyed by id.
func (e *Engine) accountMap(list []Account) (map[string]*Books, error) {
	m := make(map[string]*Books, len(list))
	for i, acc := range list {
		acc, err := acc.Normalised()
		if err != nil {
			return nil, fmt.Errorf("fiscal: account %d: %w", i, err)
		}
		if _, dup := m[acc.ID]; dup {
			return nil, fmt.Errorf("fiscal: account %q appears twice", acc.ID)
		}
		m[acc.ID] = &Books{e: e, acc: acc}
	}
	return m, nil
}

// SetAccounts replaces the engine's accounts while it runs (an operator
// added an account or changed a seller): the list is validated whole and
// takes effect at once for every later Books call; a list with an error
// changes nothing. Books already handed out keep the account as it was;
// records already made keep the seller they were made with.
func (e *Engine) SetAccounts(accounts []Account) error {
	m, err := e.accountMap(accounts)
	if err != nil {
		return err
	}
	e.accounts.Store(&m)
	return nil
}

package fiscal

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// sandbox is the sandbox environment (spec §1 "Environments", §8): its own
// ledger file, Merkle log key and receipt keyring under <DataDir>/sandbox,
// so that sandbox data never enters the production ledger and no sandbox key
// ever enters the production JWKS. Sandbox receipts still carry a verifiable
// tlog proof, against the sandbox log.
type sandbox struct {
	ledger  *ledger.Ledger
	keyring *receipt.Keyring
	origin  string
	logVKey string

	randMu sync.Mutex
	rand   io.Reader // for sandbox ids
}

// SandboxIDPrefix opens the id of every sandbox record: a sandbox id can
// never be mistaken for (or collide with) a production event id.
const SandboxIDPrefix = "x402-sandbox-"

// sandboxOrigin is the sandbox log's origin: the production origin with
// "/sandbox" appended, so the two logs can never be confused.
func sandboxOrigin(origin string) string { return origin + "/sandbox" }

// openSandbox opens (or creates) the sandbox environment in dir.
func openSandbox(dir, origin string, now time.Time, rnd io.Reader) (*sandbox, error) {
	keyDir := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return nil, fmt.Errorf("fiscal: sandbox dir: %w", err)
	}
	sb := &sandbox{origin: sandboxOrigin(origin), rand: rnd}
	var err error
	if sb.keyring, err = receipt.OpenKeyring(keyDir, receipt.EnvSandbox, now, rnd); err != nil {
		return nil, fmt.Errorf("fiscal: sandbox receipt keys: %w", err)
	}
	signer, vkey, err := ledger.LoadOrCreateLogKey(filepath.Join(keyDir, "log.key"), sb.origin)
	if err != nil {
		return nil, fmt.Errorf("fiscal: sandbox log key: %w", err)
	}
	sb.logVKey = vkey
	if sb.ledger, err = ledger.Open(filepath.Join(dir, "ledger.db"), ledger.Options{Origin: sb.origin, Signer: signer}); err != nil {
		return nil, fmt.Errorf("fiscal: sandbox ledger: %w", err)
	}
	return sb, nil
}

func (sb *sandbox) close() error { return sb.ledger.Close() }

// newID returns a fresh sandbox record id with 128 random bits: sandbox
// records are readable by anyone who holds their id, so ids must not be
// guessable (they may carry what a tester typed).
func (sb *sandbox) newID() (string, error) {
	var b [16]byte
	sb.randMu.Lock()
	_, err := io.ReadFull(sb.rand, b[:])
	sb.randMu.Unlock()
	if err != nil {
		return "", &Error{Code: CodeInternal, Detail: "no randomness for a sandbox id", Err: err}
	}
	return SandboxIDPrefix + hex.EncodeToString(b[:]), nil
}

// SimulateRequest is the body of POST /sandbox/v1/simulate: a settlement
// request exactly as POST /settlements takes it (spec §2.1, same strict
// rules), plus an optional seller. The seller is, in this order: the body's
// seller; the account's seller when a valid key was sent; else
// SandboxDemoSeller().
type SimulateRequest struct {
	SettlementRequest
	Seller *Seller `json:"seller,omitempty"`
}

// DecodeSimulateRequest reads a SimulateRequest as strictly as
// DecodeSettlementRequest.
func DecodeSimulateRequest(r io.Reader) (SimulateRequest, error) {
	var req SimulateRequest
	err := decodeStrict(r, &req)
	var fe *Error
	if errors.As(err, &fe) {
		// encoding/json names a member of an embedded struct by the Go
		// type's name; the body has no such level.
		if rest, ok := strings.CutPrefix(fe.Field, "/SettlementRequest/"); ok {
			c := *fe
			c.Field = "/" + rest
			return req, &c
		}
	}
	return req, err
}

// SandboxDemoSeller returns the seller of a simulation that names none and
// is sent without a key: an Irish company registered for the OSS, above the
// Art. 59c threshold.
func SandboxDemoSeller() Seller {
	return Seller{
		LegalName:     "Sandbox Demo Seller Ltd",
		VATNumber:     "IE1234567T",
		LegalID:       "IE-CRO-000000",
		Country:       "IE",
		Address:       Address{Street: "1 Sandbox Street", City: "Dublin", PostalCode: "D02 X285", Country: "IE"},
		OverThreshold: true,
		SupplyKind:    "digital_service",
		ItemName:      "Digital service (sandbox)",
	}
}

// AnonymousAccount is the account id of sandbox records made without a key.
const AnonymousAccount = "anonymous"

// Simulation is the answer of Simulate and the 200 body of POST
// /sandbox/v1/simulate: the sandbox record, its UBL (absent while the
// record is pending review) and its receipt, all watermarked.
type Simulation struct {
	Object      string          `json:"object"`      // "sandbox_simulation"
	Environment string          `json:"environment"` // "sandbox"
	Watermark   string          `json:"watermark"`   // receipt.SandboxWatermark
	Record      json.RawMessage `json:"record"`      // as GET /sandbox/v1/settlements/{id} serves it
	UBL         string          `json:"ubl,omitempty"`
	Receipt     json.RawMessage `json:"receipt"` // as GET /sandbox/v1/receipts/{id} serves it
	JWKSURL     string          `json:"jwksUrl"` // the sandbox key set: "/sandbox/v1/jwks.json"
	LogKey      string          `json:"logKey"`  // the sandbox log's note verifier key
	Quota       *Quota          `json:"-"`       // the agent's quota after this call; nil when not metered
}

// Simulate runs a settlement through the production pipeline (validation,
// on-chain verification where the network's policy requires it, registry
// lookup, determination, FX, invoice, receipt) and records the result in the
// sandbox ledger, never in the production one. The record, the UBL (whose
// note opens with ubl.SandboxWatermark) and the receipt (environment
// "sandbox", claim watermark = receipt.SandboxWatermark, signed by the
// sandbox key) are watermarked; a sandbox receipt fails receipt.Verify
// against the production JWKS.
//
// accountID is the authenticated account, "" for none. The call counts
// against agent's sandbox quota once the request is valid.
func (e *Engine) Simulate(ctx context.Context, accountID string, agent Agent, req SimulateRequest) (*Simulation, error) {
	now := e.clock().UTC()
	acc, err := e.sandboxAccount(accountID, req.Seller)
	if err != nil {
		return nil, err
	}
	s, err := req.SettlementRequest.validate(now)
	if err != nil {
		return nil, err
	}
	if s.SupplyKind == "" {
		s.SupplyKind = acc.Seller.SupplyKind
	}
	if s.Description == "" {
		s.Description = acc.Seller.ItemName
	}
	quota, err := e.takeQuota(agent, now)
	if err != nil {
		return nil, err
	}
	en, err := e.prepare(ctx, acc, s, now)
	if err != nil {
		return nil, err
	}
	if err := e.toSandbox(en, now); err != nil {
		return nil, err
	}
	stored, err := e.sandbox.append(ctx, en)
	if err != nil {
		return nil, err
	}
	rcpt, err := assembleReceipt(e.sandbox.ledger, en.id)
	if err != nil {
		return nil, err
	}
	return &Simulation{
		Object:      "sandbox_simulation",
		Environment: receipt.EnvSandbox,
		Watermark:   receipt.SandboxWatermark,
		Record:      stored,
		UBL:         string(en.ubl),
		Receipt:     rcpt,
		JWKSURL:     "/sandbox/v1/jwks.json",
		LogKey:      e.sandbox.logVKey,
		Quota:       quota,
	}, nil
}

// sandboxAccount is the account a simulation runs for.
func (e *Engine) sandboxAccount(accountID string, seller *Seller) (*Account, error) {
	acc := &Account{ID: AnonymousAccount, Seller: SandboxDemoSeller()}
	if accountID != "" {
		a, ok := e.accounts.Get(accountID)
		if !ok {
			return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
		}
		acc = &Account{ID: a.ID, Seller: a.Seller}
	}
	if seller != nil {
		if err := seller.validate(); err != nil {
			return nil, &Error{Code: CodeBadRequest, Field: "/seller", Detail: err.Error()}
		}
		acc.Seller = seller.normalised()
	}
	return acc, nil
}

// toSandbox turns an entry prepare made for production into its sandbox
// twin: a fresh sandbox id, environment "sandbox", sandbox URLs, the UBL
// rendered again (its id and its watermarked note change) and the receipt
// claims made again with the watermark.
func (e *Engine) toSandbox(en *entry, now time.Time) error {
	id, err := e.sandbox.newID()
	if err != nil {
		return err
	}
	en.id = id
	r := &en.record
	r.ID = id
	r.Environment = receipt.EnvSandbox
	r.Receipt.ID = ReceiptID(id)
	r.Receipt.URL = "/sandbox/v1/receipts/" + ReceiptID(id)
	r.History = append([]Revision(nil), r.History...)
	for i := range r.History {
		r.History[i].ReceiptID = ReceiptID(id)
	}
	if r.Invoice != nil {
		gross, err := decimal.NewFromString(r.FX.GrossEUR)
		if err != nil {
			return &Error{Code: CodeInternal, Detail: "gross amount unreadable", Err: err}
		}
		if err := e.attachInvoice(en, gross, now); err != nil {
			return err
		}
		r.Invoice.URL = "/sandbox/v1/settlements/" + id + "/ubl"
	}
	en.claims = receiptClaims(r, now)
	en.claims.Watermark = receipt.SandboxWatermark
	return nil
}

// append writes a sandbox entry: the record and UBL documents, the receipt
// JWS (signed by the sandbox key) as the leaf of the sandbox log. There are
// no claims (a simulation may be repeated), no outbox event (webhooks are a
// production matter) and no revisions.
func (sb *sandbox) append(ctx context.Context, en *entry) ([]byte, error) {
	var stored []byte
	_, err := sb.ledger.Append(ctx, ledger.Append{Build: func(index int64) (ledger.Entry, error) {
		rec := en.record
		rec.Ledger = LedgerRef{Origin: sb.origin, Index: index}
		rec.History = append([]Revision(nil), rec.History...)
		for i := range rec.History {
			rec.History[i].LedgerIndex = index
		}
		claims := en.claims
		claims.Log = receipt.LogRef{Origin: sb.origin, Index: index}
		jws, err := sb.keyring.Sign(claims)
		if err != nil {
			return ledger.Entry{}, fmt.Errorf("fiscal: sign sandbox receipt: %w", err)
		}
		doc, err := json.Marshal(rec)
		if err != nil {
			return ledger.Entry{}, err
		}
		stored = doc
		docs := map[string][]byte{docRecord: doc}
		if en.ubl != nil {
			docs[docUBL] = en.ubl
		}
		return ledger.Entry{ID: en.id, Leaf: []byte(jws), Docs: docs}, nil
	}})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, storeError(err)
	}
	return stored, nil
}

// assembleReceipt builds the receipt document of entry id of l: its JWS
// leaf, its inclusion proof and the checkpoint of the commit that appended
// it.
func assembleReceipt(l *ledger.Ledger, id string) ([]byte, error) {
	ent, err := l.Entry(id)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, notFound("receipt " + ReceiptID(id))
	}
	if err != nil {
		return nil, storeError(err)
	}
	cp, err := l.CoveringCheckpoint(ent.Index)
	if err != nil {
		return nil, storeError(err)
	}
	proof, err := l.InclusionProof(ent.Index, cp.Size)
	if err != nil {
		return nil, storeError(err)
	}
	return receipt.Assemble(string(ent.Leaf), ent.Index, proof, cp.Note)
}

// SandboxRecord returns a sandbox record as stored. Sandbox records are
// readable by id without a key: the id carries 128 random bits.
func (e *Engine) SandboxRecord(ctx context.Context, id string) ([]byte, error) {
	if !strings.HasPrefix(id, SandboxIDPrefix) {
		return nil, notFound("sandbox settlement " + id)
	}
	raw, err := e.sandbox.ledger.Doc(id, docRecord)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, notFound("sandbox settlement " + id)
	}
	if err != nil {
		return nil, storeError(err)
	}
	return raw, nil
}

// SandboxInvoice returns the UBL of a sandbox record and its SHA-256 (hex).
func (e *Engine) SandboxInvoice(ctx context.Context, id string) ([]byte, string, error) {
	raw, err := e.SandboxRecord(ctx, id)
	if err != nil {
		return nil, "", err
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, "", &Error{Code: CodeInternal, Detail: "stored sandbox record is unreadable", Err: err}
	}
	if r.Invoice == nil {
		return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("sandbox settlement %s has no invoice: it is %s", id, r.ReviewStatus)}
	}
	return storedInvoice(e.sandbox.ledger, id, r.Invoice.UBLSHA256)
}

// SandboxReceipt returns a sandbox receipt ("rcpt_" + sandbox id) with its
// proof of inclusion in the sandbox log.
func (e *Engine) SandboxReceipt(ctx context.Context, receiptID string) ([]byte, error) {
	id, ok := strings.CutPrefix(receiptID, "rcpt_")
	if !ok || !strings.HasPrefix(id, SandboxIDPrefix) {
		return nil, notFound("sandbox receipt " + receiptID)
	}
	return assembleReceipt(e.sandbox.ledger, id)
}

// SandboxJWKS returns the JSON Web Key Set of the sandbox receipt keys. It
// shares no key with JWKS.
func (e *Engine) SandboxJWKS() ([]byte, error) { return json.Marshal(e.sandbox.keyring.KeySet()) }

// SandboxLogVerifierKey is the note verifier key of the sandbox log, which
// verifying a sandbox receipt's tlog proof needs.
func (e *Engine) SandboxLogVerifierKey() string { return e.sandbox.logVKey }

// SandboxLedger returns the sandbox ledger, for read access (checks).
func (e *Engine) SandboxLedger() *ledger.Ledger { return e.sandbox.ledger }

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// Options configure a Sandbox. Every field documents its zero value.
type Options struct {
	// QuotaPerDay is the number of evaluate and simulate calls each agent
	// may make per UTC day. 0 means DefaultQuotaPerDay; a
	// negative value means no quota.
	QuotaPerDay int
}

// DefaultQuotaPerDay is the published sandbox quota (GET /v1/pricing,
// README "Limits, quota and authentication"): 10 calls per agent per day.
const DefaultQuotaPerDay = 10

// Sandbox is the sandbox environment of a production engine: its own
// engine, made on first use in <Dir>/sandbox, with its own ledger file
// (log origin <origin>/sandbox), log key and receipt keyring ("sandbox"),
// so sandbox data never enters the production ledger and a sandbox key is
// never in the production JWKS. The production engine's Close closes it.
type Sandbox struct {
	prod  *fiscal.Engine
	quota int

	mu  sync.Mutex
	eng *fiscal.Engine // nil until first used
	err error          // why it could not be opened
}

// New returns the sandbox of the production engine prod. Nothing is
// created on disk until a sandbox call needs it, except beside a log that
// several replicas share (PostgreSQL), where the sandbox opens at once.
func New(prod *fiscal.Engine, opts Options) *Sandbox {
	q := opts.QuotaPerDay
	if q == 0 {
		q = DefaultQuotaPerDay
	}
	s := &Sandbox{prod: prod, quota: q}
	if prod.Ledger().Shared() {
		// Replicas of a shared log share the sandbox's keys too: make them
		// (and the sandbox log) at start, so that the keys directory an
		// operator copies to the other replicas holds them.
		if _, err := s.engine(); err != nil {
			prod.Settings().Logger.Error("sandbox: opening at start", "err", err)
		}
	}
	return s
}

// engine opens the sandbox engine on first use: it has the production
// engine's rates (ECB and VAT), registry and chain verification, and no accounts (a
// simulation names its seller).
func (s *Sandbox) engine() (*fiscal.Engine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng != nil || s.err != nil {
		return s.eng, s.err
	}
	set := s.prod.Settings()
	eng, err := fiscal.New(fiscal.Config{
		Dir:          filepath.Join(set.Dir, "sandbox"),
		Store:        StoreURL(set.Store),
		LogOrigin:    set.LogOrigin + "/sandbox",
		Environment:  receipt.EnvSandbox,
		FX:           set.FX,
		FXPolicy:     set.FXPolicy,
		Rates:        set.Rates,
		VIES:         set.VIES,
		Chain:        set.Chain,
		Clock:        set.Clock,
		Rand:         set.Rand,
		Logger:       set.Logger,
		Fee:          sandboxFee(set.Fee),
		Recheck:      fiscal.RecheckPolicy{Interval: -1},
		NoBackground: true,
	})
	if err != nil {
		s.err = fmt.Errorf("sandbox: %w", err)
		return nil, s.err
	}
	s.eng = eng
	s.prod.Go(func(stop <-chan struct{}) {
		<-stop
		s.mu.Lock()
		defer s.mu.Unlock()
		s.eng.Close()
	})
	return eng, nil
}

// sandboxFee is the fee a sandbox record accrues: none. A simulation is
// priced 0 (the sandbox price of evaluate and simulate, GET /v1/pricing) and is
// never invoiced, so its record and receipt must not state the production
// policy's accrual; they keep its model and collection, at 0 bps.
func sandboxFee(prod fiscal.FeePolicy) fiscal.FeePolicy {
	return fiscal.FeePolicy{Model: prod.Model, Collection: prod.Collection, Label: SandboxFeeLabel}
}

// SandboxFeeLabel labels the fee of a sandbox record: 0 bps, the sandbox
// being free.
const SandboxFeeLabel = "sandbox_free"

func (s *Sandbox) open() (*fiscal.Engine, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the sandbox cannot be opened", Err: err}
	}
	return eng, nil
}

// SimulateRequest is the body of POST /sandbox/v1/simulate: a settlement
// request exactly as POST /settlements takes it (SettlementRequest, same strict
// rules), plus an optional seller. The seller is, in this order: the body's
// seller; the account's seller when a valid key was sent; else
// DemoSeller().
type SimulateRequest struct {
	fiscal.SettlementRequest
	Seller *fiscal.Seller `json:"seller,omitempty"`
}

// DemoSeller returns the seller of a simulation that names none and is sent
// without a key: an Irish company registered for the OSS, above the
// Art. 59c threshold.
func DemoSeller() fiscal.Seller {
	return fiscal.Seller{
		LegalName:     "Sandbox Demo Seller Ltd",
		VATNumber:     "IE1234567T",
		LegalID:       "IE-CRO-000000",
		Country:       "IE",
		Address:       fiscal.Address{Street: "1 Sandbox Street", City: "Dublin", PostalCode: "D02 X285", Country: "IE"},
		OverThreshold: true,
		Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
		SupplyKind:    "digital_service",
		ItemName:      "Digital service (sandbox)",
	}
}

// AnonymousAccount is the account id of sandbox records made without a key.
const AnonymousAccount = "anonymous"

// Simulation is the answer of Simulate and the 200 body of POST
// /sandbox/v1/simulate: the sandbox record, its UBL (absent while the
// record is pending review, and when the seller's invoicing mode gives the
// supply no invoice of its own: the record's invoicing says what covers
// it) and its receipt, all watermarked.
type Simulation struct {
	Object      string          `json:"object"`      // "sandbox_simulation"
	Environment string          `json:"environment"` // "sandbox"
	Watermark   string          `json:"watermark"`   // receipt.SandboxWatermark
	Record      json.RawMessage `json:"record"`      // as GET /sandbox/v1/settlements/{id} serves it
	UBL         string          `json:"ubl,omitempty"`
	Receipt     json.RawMessage `json:"receipt"` // as GET /sandbox/v1/receipts/{id} serves it
	// Openings open the receipt's committed fields (3.0.0): a production
	// account reads them behind its key (GET /v1/receipts/{id}/openings);
	// a simulation hands them over at once.
	Openings json.RawMessage `json:"openings"`
	JWKSURL  string          `json:"jwksUrl"` // the sandbox key set: "/sandbox/v1/jwks.json"
	LogKey   string          `json:"logKey"`  // the sandbox log's note verifier key
	Quota    *Quota          `json:"-"`       // the agent's quota after this call; nil when not metered
}

// Simulate runs a settlement through the production pipeline (validation,
// on-chain verification where the network's policy requires it, registry
// lookup, determination, FX, invoice under the seller's invoicing mode,
// receipt) and records the result in the sandbox ledger, never in the
// production one. The record, the UBL (whose
// note opens with ubl.SandboxWatermark) and the receipt (environment
// "sandbox", claim watermark = receipt.SandboxWatermark, signed by the
// sandbox key) are watermarked; a sandbox receipt fails receipt.Verify
// against the production JWKS.
//
// accountID is the authenticated account, "" for none. The call counts
// against agent's sandbox quota once the request is valid (after the
// chain verification, which a used-up quota does not reach); a
// simulation that fails after it was counted (no record made, or none
// answered) gives its unit back.
func (s *Sandbox) Simulate(ctx context.Context, accountID string, agent Agent, req SimulateRequest) (*Simulation, error) {
	acc, books, err := s.account(accountID, req.Seller)
	if err != nil {
		return nil, err
	}
	now := s.prod.Now().UTC()
	p, err := req.SettlementRequest.Payment(now)
	if err != nil {
		return nil, fiscal.InputError(err)
	}
	// The account's own seller is decided, as POST /settlements decides
	// it, on the account's Art. 59c running totals (read, never counted:
	// a simulation is not a sale).
	var cb *vat.CrossBorderTotals
	if books != nil {
		if cb, err = parties.AccountTotals(ctx, books, parties.AccountSeller(acc), p.Timestamp); err != nil {
			return nil, err
		}
	}
	if p.Buyer.SupplyKind == "" {
		p.Buyer.SupplyKind = acc.Seller.SupplyKind
	}
	if p.Buyer.Description == "" {
		p.Buyer.Description = acc.Seller.ItemName
	}
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	// Only a valid request counts: one the chain refuses does not.
	if err := s.checkQuota(eng, agent, now); err != nil {
		return nil, err
	}
	verification, err := eng.VerifyPayment(ctx, p)
	if err != nil {
		return nil, err
	}
	quota, err := s.takeQuota(eng, agent, now)
	if err != nil {
		return nil, err
	}
	sim, err := s.record(ctx, eng, acc, fiscal.Supply{Payment: p, Seller: acc.Seller, Verification: verification, CrossBorder: cb}, now)
	if err != nil {
		s.giveBackQuota(eng, agent, now) // a simulation that failed does not count
		return nil, err
	}
	sim.Quota = quota
	return sim, nil
}

// record prepares, issues and commits a simulation's sandbox record and
// reads back what the answer shows of it.
func (s *Sandbox) record(ctx context.Context, eng *fiscal.Engine, acc fiscal.Account, supply fiscal.Supply, now time.Time) (*Simulation, error) {
	d, err := eng.Prepare(ctx, acc.ID, supply, now)
	if err != nil {
		return nil, err
	}
	if err := eng.Issue(d, acc.Seller); err != nil {
		return nil, err
	}
	stored, _, err := eng.Commit(ctx, d)
	if err != nil {
		return nil, err
	}
	var r fiscal.Record
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
	}
	rcpt, err := eng.Receipt(ctx, r.Receipt.ID)
	if err != nil {
		return nil, err
	}
	openings, err := eng.Ledger().Doc(strings.TrimPrefix(r.Receipt.ID, "rcpt_"), fiscal.DocOpenings)
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	sim := &Simulation{
		Object:      "sandbox_simulation",
		Environment: receipt.EnvSandbox,
		Watermark:   receipt.SandboxWatermark,
		Record:      stored,
		Receipt:     rcpt,
		Openings:    openings,
		JWKSURL:     "/sandbox/v1/jwks.json",
		LogKey:      eng.LogVerifierKey(),
	}
	if r.Invoice != nil {
		ubl, _, err := eng.StoredInvoice(r.ID, r.Invoice.UBLSHA256)
		if err != nil {
			return nil, err
		}
		sim.UBL = string(ubl)
	}
	return sim, nil
}

// account is the account a simulation runs for, and its production books
// when the seller is the account's own (a key and no body seller), nil
// otherwise.
func (s *Sandbox) account(accountID string, seller *fiscal.Seller) (fiscal.Account, *fiscal.Books, error) {
	acc := fiscal.Account{ID: AnonymousAccount, Seller: DemoSeller()}
	var books *fiscal.Books
	if accountID != "" {
		b, err := s.prod.Books(accountID)
		if err != nil {
			return acc, nil, err
		}
		acc, books = b.Account(), b
	}
	if seller != nil {
		n, err := seller.Normalised()
		if err != nil {
			return acc, nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/seller", Detail: err.Error()}
		}
		acc.Seller, books = n, nil
	}
	return acc, books, nil
}

// Record returns a sandbox record as stored. Sandbox records are readable
// by id without a key: the id carries 128 random bits.
func (s *Sandbox) Record(ctx context.Context, id string) ([]byte, error) {
	if !strings.HasPrefix(id, IDPrefix) {
		return nil, notFound("sandbox settlement " + shown.Bare(id))
	}
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	raw, err := eng.Document(id)
	if err != nil {
		var fe *fiscal.Error
		if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
			return nil, notFound("sandbox settlement " + shown.Bare(id))
		}
		return nil, err
	}
	return raw, nil
}

// IDPrefix opens the id of every sandbox record.
const IDPrefix = "x402-sandbox-"

// Invoice returns the UBL of a sandbox record and its SHA-256 (hex).
func (s *Sandbox) Invoice(ctx context.Context, id string) ([]byte, string, error) {
	raw, err := s.Record(ctx, id)
	if err != nil {
		return nil, "", err
	}
	var r fiscal.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored sandbox record is unreadable", Err: err}
	}
	if r.Invoice == nil {
		why := "it is " + r.ReviewStatus
		if inv := r.Invoicing; inv != nil && r.ReviewStatus == fiscal.StatusProcessed {
			why = fmt.Sprintf("the seller's invoicing mode %s gives it no invoice of its own (%s): %s", inv.Mode, inv.Invoice, inv.Basis)
		}
		return nil, "", &fiscal.Error{Code: fiscal.CodeNotFound, Detail: fmt.Sprintf("sandbox settlement %s has no invoice: %s", id, why)}
	}
	eng, err := s.open()
	if err != nil {
		return nil, "", err
	}
	return eng.StoredInvoice(id, r.Invoice.UBLSHA256)
}

// Receipt returns a sandbox receipt ("rcpt_" + sandbox id) with its proof
// of inclusion in the sandbox log.
func (s *Sandbox) Receipt(ctx context.Context, receiptID string) ([]byte, error) {
	id, ok := strings.CutPrefix(receiptID, "rcpt_")
	if !ok || !strings.HasPrefix(id, IDPrefix) {
		return nil, notFound("sandbox receipt " + shown.Bare(receiptID))
	}
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	return eng.Receipt(ctx, receiptID)
}

// JWKS returns the JSON Web Key Set of the sandbox receipt keys. It shares
// no key with the production engine's JWKS.
func (s *Sandbox) JWKS() ([]byte, error) {
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	return eng.JWKS()
}

// LogVerifierKey is the note verifier key of the sandbox log, which
// verifying a sandbox receipt's tlog proof needs.
func (s *Sandbox) LogVerifierKey() (string, error) {
	eng, err := s.open()
	if err != nil {
		return "", err
	}
	return eng.LogVerifierKey(), nil
}

// Ledger returns the sandbox ledger, for read access (checks).
func (s *Sandbox) Ledger() (*ledger.Ledger, error) {
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	return eng.Ledger(), nil
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
}

// StoreURL is where the sandbox log lives: beside a PostgreSQL
// production log, in the schema of the same name with "_sandbox" appended
// ("fiscal402_sandbox" beside the default schema), which every replica
// shares, so the sandbox quota is counted once for all of them.
func StoreURL(prod string) string {
	if prod == "" {
		return ""
	}
	u, err := url.Parse(prod)
	if err != nil {
		return ""
	}
	q := u.Query()
	schema := strings.TrimSpace(strings.Split(q.Get("search_path"), ",")[0])
	if schema == "" || schema == "public" {
		schema = "fiscal402"
	}
	q.Set("search_path", schema+"_sandbox")
	u.RawQuery = q.Encode()
	return u.String()
}

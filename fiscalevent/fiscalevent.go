package fiscalevent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// Request is the body of POST /v1/fiscal-events (README "Fiscal events
// (global ingest)"): a
// settled payment with its parties named in the body, from any ISO 3166-1
// country. Required: payment (the payment fields of POST /settlements:
// amountUsdc, txHash, timestamp, payerWallet, receiverWallet, network; asset
// and scheme optional),
// seller.legalName, seller.country and supply.kind. buyer.country may be
// absent, which makes the determination MANUAL_REVIEW_REQUIRED (the VAT is
// never treated as 0 %).
type Request struct {
	Payment Payment        `json:"payment"`
	Seller  parties.Seller `json:"seller"`
	Buyer   parties.Buyer  `json:"buyer"`
	Supply  parties.Supply `json:"supply"`
}

// Payment is the payment of a fiscal event: the payment fields of the
// settlement request (the OpenAPI SettlementRequest schema), validated exactly as POST /settlements
// validates them.
type Payment struct {
	AmountUSDC     string `json:"amountUsdc"`
	TxHash         string `json:"txHash"`
	Timestamp      string `json:"timestamp"`
	PayerWallet    string `json:"payerWallet"`
	ReceiverWallet string `json:"receiverWallet"`
	Network        string `json:"network"`
	Asset          string `json:"asset,omitempty"`
	Scheme         string `json:"scheme,omitempty"`
}

// Version is the in-band version of the stored fiscal event format; fields
// may be added, none are renamed. A fiscal event and a settlement record
// share the event id space (one per payment); their "object" member
// (fiscal.ObjectFiscalEvent) tells them apart.
const Version = "fiscal402.fiscal_event/1"

// EventRecorded is the type of the outbox event of a fiscal event (a stable
// name: event type names never change; README "Webhooks").
const EventRecorded = "fiscal_event.recorded"

// Event is a persisted fiscal event: the 201 body of POST
// /v1/fiscal-events and the body of GET /v1/fiscal-events/{id}. It is stored
// as JSON exactly as served. Determination is the vat package's answer for
// the corridor; Production says whether the EU VAT production invariants
// held, and Receipt and Invoice are present exactly when they did.
type Event struct {
	ID            string               `json:"id"`      // "x402-<32 hex>", the same id a settlement of this payment would have
	Object        string               `json:"object"`  // "fiscal_event"
	Version       string               `json:"version"` // Version
	Custody       string               `json:"custody"` // always "none"
	Environment   string               `json:"environment"`
	Account       string               `json:"account"`
	CreatedAt     string               `json:"createdAt"`
	Payment       fiscal.RecordPayment `json:"payment"`
	Seller        Seller               `json:"seller"`
	Buyer         Buyer                `json:"buyer"`
	Supply        fiscal.RecordSupply  `json:"supply"`
	Determination vat.Determination    `json:"determination"`
	FX            fiscal.RecordFX      `json:"fx"`
	Verification  fiscal.Verification  `json:"verification"`
	Production    ProductionCheck      `json:"production"`
	Invoice       *fiscal.InvoiceRef   `json:"invoice,omitempty"`
	Receipt       *fiscal.ReceiptRef   `json:"receipt,omitempty"`
	Fee           *fiscal.Fee          `json:"fee,omitempty"`
	Ledger        fiscal.LedgerRef     `json:"ledger"`
	// Revision and History appear from the second state on (a registry's
	// answer, a resolution): the first state is revision 1.
	Revision int               `json:"revision,omitempty"`
	History  []fiscal.Revision `json:"history,omitempty"`
}

// Seller is the seller as recorded: the account's own profile when
// the body named the account's seller (AccountSeller), else the body's facts,
// with unknown threshold facts left out.
type Seller struct {
	LegalName           string   `json:"legalName,omitempty"` // always present on a fiscal event
	Country             string   `json:"country"`
	VATNumber           string   `json:"vatNumber,omitempty"`
	OtherEstablishments []string `json:"otherEstablishments,omitempty"`
	OverThreshold       *bool    `json:"overThreshold,omitempty"`
	OptedForDestination *bool    `json:"optedForDestination,omitempty"`
	AccountSeller       bool     `json:"accountSeller"`
}

// Buyer is the buyer as attested, with the registry's answer when
// a VAT number was looked up.
type Buyer struct {
	Country        string `json:"country,omitempty"`
	BusinessStatus string `json:"businessStatus"`
	VATNumber      string `json:"vatNumber,omitempty"`
	// VATNumberAsGiven is the VAT number as the customer gave it when it
	// came without its country prefix and VATNumber is it read under the
	// buyer's country, else empty (fiscal.RecordBuyer.VATNumberAsGiven):
	// every revision is decided on it and keeps the note
	// vat_number_prefix_supplied.
	VATNumberAsGiven string       `json:"vatNumberAsGiven,omitempty"`
	Name             string       `json:"name,omitempty"`
	PostalCode       string       `json:"postalCode,omitempty"`
	Attested         string       `json:"attestedBy"` // "merchant": the caller attests the buyer
	Registry         *vies.Result `json:"registry,omitempty"`
	// Evidence are the items of the customer's location a resolution
	// supplied (fiscal.ResolutionBuyer.Evidence), kept so that a later
	// revision is decided on them too; their values are personal data,
	// as on a settlement record.
	Evidence []vat.Evidence `json:"locationEvidence,omitempty"`
	// Address is the customer's postal address a resolution supplied
	// (fiscal.ResolutionBuyer.Address, consumerAddress), the one a
	// business sale's invoice states (Art. 226(5) Directive
	// 2006/112/EC); kept so that a later revision states it too.
	Address *fiscal.Address `json:"address,omitempty"`
}

// ProductionCheck lists the EU VAT production invariants in a fixed order,
// each with whether it held. Receipt is true exactly when all held, and then
// (and only then) the event carries a production receipt and invoice.
type ProductionCheck struct {
	Receipt    bool        `json:"receipt"`
	Invariants []Invariant `json:"invariants"`
}

// Invariant is one EU VAT production invariant and its outcome for an event.
type Invariant struct {
	Code   string `json:"code"`
	Holds  bool   `json:"holds"`
	Detail string `json:"detail"`
}

// The EU VAT production invariants (stable codes). A fiscal event gets a
// production receipt (service.receipt/1.0.0, jurisdiction eu-vat) and a UBL
// invoice only when every one holds; package doc "# Fiscal events".
const (
	InvariantPaymentSupported = "payment_supported" // x402 exact, USDC on eip155:8453 or eip155:1 (checked at input: 422 otherwise), verified on chain where the policy requires it
	InvariantSellerIsAccount  = "seller_is_account" // the seller in the body is the authenticated account's seller
	InvariantBuyerInEU        = "buyer_in_eu"       // the buyer's attested country is an EU-27 member state (Monaco as France, Art. 7(1))
	InvariantDeterminedEU     = "determined_eu_vat" // the determination is DETERMINED under eu-vat-oss-2026.09
	InvariantFXRateAvailable  = "fx_rate_available" // an ECB reference rate exists for the settlement date
	// InvariantInvoiceIssuable is listed only when it fails, after all
	// the others held: the invoice cannot be issued under the invoicing
	// law of the supply (package fiscal: the national currency, the
	// customer's address, the rules of EN 16931 and Peppol).
	InvariantInvoiceIssuable = "invoice_issuable"
)

// Result is the answer of Record.
type Result struct {
	Outcome fiscal.Outcome
	Event   *Event
	JSON    []byte // the event exactly as stored and served
}

// Service records and reads an engine's fiscal events.
type Service struct{ e *fiscal.Engine }

// New returns the fiscal event service of e, and registers with e how a
// fiscal event is revised when the registry answers about its buyer's VAT
// number.
func New(e *fiscal.Engine) *Service {
	s := &Service{e: e}
	e.HandleRecheck(fiscal.ObjectFiscalEvent, s.recheck)
	return s
}

// input is a validated fiscal event request.
type input struct {
	p      fiscal.Payment // with the buyer and supply copied in
	seller parties.SellerFacts
	buyer  parties.BuyerFacts
	// asked is what the request itself stated where the account's
	// profile fills in: the seller as parsed and the description given
	// (the request's fingerprint).
	asked struct {
		seller      parties.SellerFacts
		description string
	}
	// contradicts is the error of a seller fact that contradicts the
	// account's profile or totals (parties.MatchAccountSeller), answered
	// when the payment is not already recorded.
	contradicts error
}

// validate checks a fiscal event request. Payment fields are checked by the
// settlement rules (their errors point into /payment); parties by package
// parties.
func (req Request) validate(now time.Time, acc fiscal.Account, totalsAt func(time.Time) (*vat.CrossBorderTotals, error)) (input, error) {
	var in input
	p := req.Payment
	pay, err := fiscal.SettlementRequest{
		AmountUSDC: p.AmountUSDC, TxHash: p.TxHash, Timestamp: p.Timestamp, PayerWallet: p.PayerWallet,
		ReceiverWallet: p.ReceiverWallet, Network: p.Network, Asset: p.Asset, Scheme: p.Scheme,
	}.Payment(now)
	if err != nil {
		return in, underField("/payment", fiscal.InputError(err))
	}
	seller, err := parties.ParseSeller("/seller", req.Seller, true)
	if err != nil {
		return in, err
	}
	// The request's seller as it states it, its name as the account's
	// seller is matched (parties.MatchAccountSeller: case and spaces
	// aside), so that a spelling the match accepts is the same request
	// whether or not the account's name still matches it.
	in.asked.seller = seller
	in.asked.seller.LegalName = strings.ToLower(strings.Join(strings.Fields(seller.LegalName), " "))
	var totals func() (*vat.CrossBorderTotals, error)
	if totalsAt != nil {
		totals = func() (*vat.CrossBorderTotals, error) { return totalsAt(pay.Timestamp) } // at the supply's date, as it is decided
	}
	// A fact contradicting the account's profile is refused only for a
	// payment not yet recorded (Record): a retry of a request answered
	// before the profile changed replays its answer.
	if m, ok, err := parties.MatchAccountSeller("/seller", seller, acc, totals); err != nil {
		in.contradicts = err
	} else if ok {
		seller = m
	}
	buyer, err := parties.ParseBuyer("/buyer", req.Buyer)
	if err != nil {
		return in, err
	}
	kind, desc, err := parties.ParseSupply("/supply", req.Supply)
	if err != nil {
		return in, err
	}
	in.asked.description = desc
	// The account's own sale is described by its item name, as its
	// settlements are. Another seller's is named by nothing but the body:
	// "Digital service" describes only the electronically supplied
	// services the ruleset covers, and a supply of another kind (goods,
	// other services, left for review as supply_kind_not_covered) keeps
	// the description it states, none, rather than be recorded as one.
	if desc == "" {
		switch {
		case seller.IsAccount:
			desc = acc.Seller.ItemName
		case vat.SupplyKindCovered(kind):
			desc = "Digital service"
		}
	}
	pay.Buyer = fiscal.BuyerFacts{Country: buyer.Country, PostalCode: buyer.PostalCode, VATNumber: buyer.VATNumber, Name: buyer.Name,
		SupplyKind: kind, Description: desc, Evidence: buyer.Evidence, Address: buyer.Address}
	in.p, in.seller, in.buyer = pay, seller, buyer
	return in, nil
}

// underField moves the JSON pointer of an *fiscal.Error under prefix: the
// payment of a fiscal event is validated by the settlement rules, whose
// pointers are relative to the payment object.
func underField(prefix string, err error) error {
	var fe *fiscal.Error
	if errors.As(err, &fe) && strings.HasPrefix(fe.Field, "/") {
		c := *fe
		c.Field = prefix + fe.Field
		return &c
	}
	return err
}

// fingerprint identifies the request body for Idempotency-Key comparison,
// after normalisation; its first member keeps it distinct from any
// settlement fingerprint, so one key cannot be replayed across the two
// endpoints. It covers what the request states (the seller as the body
// names it, the description it gives), never the account's profile the
// seller is matched with: a retry of the same request after the profile
// changed is the same request and replays its answer (IETF HTTPAPI
// draft-ietf-httpapi-idempotency-key-header: the fingerprint is of the
// request payload).
func (in input) fingerprint() []byte {
	p := in.p
	p.Buyer.Description = in.asked.description
	return hash(struct {
		Kind   string
		S      []byte
		Seller parties.SellerFacts
		BS     string
	}{fiscal.ObjectFiscalEvent + "/2", p.Fingerprint(), in.asked.seller, in.buyer.BusinessStatus}) // the payment's covers the customer's address
}

// legacyFingerprint is the fingerprint keys were stored with before: over
// the matched seller, the account's profile included, and the description
// the profile defaults. A key stored with it still replays a retry of its
// request while the profile is unchanged (answerFromLedger).
func (in input) legacyFingerprint() []byte {
	return hash(struct {
		Kind   string
		S      []byte
		Seller parties.SellerFacts
		BS     string
	}{fiscal.ObjectFiscalEvent + "/1", in.p.Fingerprint(), in.seller, in.buyer.BusinessStatus})
}

// Record persists a fiscal event for the account: one ledger entry (event
// type fiscal_event.recorded) holding the event, its determination, and,
// when the EU VAT production invariants hold, a production receipt and UBL
// invoice. A nil error means the entry is durably in the ledger.
//
// A payment is recorded once, as a settlement or as a fiscal event: both
// take the same (network, txHash) claim in one ledger transaction. A
// duplicate fiscal event of the same account answers Existing (with other
// payment facts a PAYMENT_CONFLICT); a payment
// this account recorded as a settlement is a PAYMENT_ALREADY_RECORDED
// conflict naming it; another account's payment is a SETTLEMENT_CONFLICT.
// The Idempotency-Key space is the account's, shared with settlements.
func (s *Service) Record(ctx context.Context, accountID string, req Request, idempotencyKey string) (*Result, error) {
	b, err := s.e.Books(accountID)
	if err != nil {
		return nil, err
	}
	if err := wire.IdempotencyKey(idempotencyKey); err != nil {
		return nil, fiscal.InputError(err)
	}
	now := s.e.Now().UTC()
	in, err := req.validate(now, b.Account(), func(at time.Time) (*vat.CrossBorderTotals, error) {
		return parties.AccountTotals(ctx, b, parties.AccountSeller(b.Account()), at)
	})
	if err != nil {
		return nil, err
	}
	fp := in.fingerprint()
	if res, err := s.answerFromLedger(b, in, idempotencyKey, fp); res != nil || err != nil {
		return res, err
	}
	if in.contradicts != nil {
		return nil, in.contradicts
	}
	d, ev, err := s.prepare(ctx, b.Account(), in, now)
	if err != nil {
		return nil, err
	}
	if err := parties.StatedUnderContradicted("/seller", in.asked.seller, in.seller, ev.Determination); err != nil {
		return nil, err
	}
	d.ClaimPayment(idempotencyKey, fp)
	stored, res, err := s.e.Commit(ctx, d)
	if err != nil {
		return nil, underField("/payment", err)
	}
	if res.Existing {
		// A concurrent request took the claims first: answer as it would.
		if ans, err := s.answerFromLedger(b, in, idempotencyKey, fp); ans != nil || err != nil {
			return ans, err
		}
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the ledger answered Existing without a holder"}
	}
	_ = ev
	var out Event
	if err := json.Unmarshal(stored, &out); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
	}
	return &Result{Outcome: fiscal.Created, Event: &out, JSON: stored}, nil
}

// answerFromLedger answers a replay or duplicate from the ledger, as the
// engine does for settlements. Books.Lookup binds a free key to the record
// that holds the payment, so the holder is read without the key first: a
// payment this account recorded as a settlement is refused
// (PAYMENT_ALREADY_RECORDED) with the key left free, as POST /settlements
// leaves it for a payment recorded as a fiscal event; only a duplicate of
// a fiscal event binds the key to its answer.
func (s *Service) answerFromLedger(b *fiscal.Books, in input, idemKey string, fp []byte) (*Result, error) {
	if idemKey != "" {
		// The key first: the same key with another body is a conflict
		// even when the payment exists.
		holder, o, err := s.lookup(b, in, "", "", idemKey, fp)
		if err != nil || holder != "" {
			if err != nil {
				return nil, err
			}
			return s.duplicate(b, in, holder, o)
		}
		holder, o, err = s.lookup(b, in, in.p.Network, in.p.TxHash, "", nil)
		if err != nil || holder == "" {
			return nil, err
		}
		if _, err := s.duplicate(b, in, holder, o); err != nil {
			return nil, err
		}
	}
	holder, o, err := s.lookup(b, in, in.p.Network, in.p.TxHash, idemKey, fp)
	if err != nil || holder == "" {
		return nil, err
	}
	return s.duplicate(b, in, holder, o)
}

// duplicate is stored, and for a duplicate of the payment (Existing) the
// check that the request states the payment the event records: another
// amount, payer, receiver or asset is a PAYMENT_CONFLICT, as POST
// /settlements answers (a transaction backs one payment; answering with
// the old event would hide the contradiction), and nothing is written.
func (s *Service) duplicate(b *fiscal.Books, in input, holder string, o fiscal.Outcome) (*Result, error) {
	res, err := s.stored(b, holder, o)
	if err != nil || o != fiscal.Existing {
		return res, err
	}
	r := res.Event.Payment
	diff := in.p.Differences(r.AmountUSDC, r.PayerWallet, r.ReceiverWallet, r.Asset)
	if len(diff) == 0 {
		return res, nil
	}
	return nil, &fiscal.Error{Code: fiscal.CodePaymentConflict, Field: "/payment/txHash", Detail: fmt.Sprintf(
		"this (network, txHash) payment is already recorded as %s with other facts: %s; nothing was written", holder, strings.Join(diff, ", "))}
}

// lookup is Books.Lookup under /payment; a key stored with the earlier
// fingerprint of the same request (legacyFingerprint) is its replay.
func (s *Service) lookup(b *fiscal.Books, in input, network, txHash, idemKey string, fp []byte) (string, fiscal.Outcome, error) {
	holder, o, err := b.Lookup(network, txHash, idemKey, fp)
	if fe := (*fiscal.Error)(nil); idemKey != "" && errors.As(err, &fe) && fe.Code == fiscal.CodeIdempotencyConflict {
		if h, lo, lerr := b.Lookup(network, txHash, idemKey, in.legacyFingerprint()); lerr == nil {
			holder, o, err = h, lo, nil
		}
	}
	if err != nil {
		return "", 0, underField("/payment", err)
	}
	return holder, o, nil
}

// stored answers with the stored event id; a settlement record holding the
// payment is a PAYMENT_ALREADY_RECORDED conflict. A duplicate gets the
// event as it is now; a replay of the Idempotency-Key the first answer,
// the event as the key's own entry stored it, whatever revisions came
// since (the same key and body return the original event, as
// draft-ietf-httpapi-idempotency-key-header has a retry get the first
// result): the current revision is one GET away.
func (s *Service) stored(b *fiscal.Books, id string, o fiscal.Outcome) (*Result, error) {
	accountID := b.Account().ID
	ev, raw, err := s.load(id)
	if err == nil && o == fiscal.Replayed && ev.Account == accountID {
		ev, raw, err = entryEvent(b, id, id)
	}
	if err != nil {
		return nil, err
	}
	if ev.Object != fiscal.ObjectFiscalEvent {
		return nil, fiscal.AlreadyRecorded(ev.Object, id)
	}
	if ev.Account != accountID {
		return nil, &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: "/payment/txHash", Detail: "this (network, txHash) settlement is already recorded for another account"}
	}
	return &Result{Outcome: o, Event: ev, JSON: raw}, nil
}

// prepare does the work that needs no ledger: chain verification (as for
// settlements), registry lookup, determination, FX, the invariants and,
// when they hold, the invoice and the receipt.
func (s *Service) prepare(ctx context.Context, acc fiscal.Account, in input, now time.Time) (*fiscal.Draft, *Event, error) {
	verification, err := s.e.VerifyPayment(ctx, in.p)
	if err != nil {
		return nil, nil, underField("/payment", err)
	}
	return s.decide(ctx, acc, in, now, verification, nil, nil)
}

// decide classifies a fiscal event's input (the first time, or again for a
// revision with the verification and registry answer already had, and
// determine replacing the rules for a manual determination) and builds its
// draft and event.
func (s *Service) decide(ctx context.Context, acc fiscal.Account, in input, now time.Time, verification fiscal.Verification, registry *vies.Result, determine func(vat.Input) vat.Determination) (*fiscal.Draft, *Event, error) {
	p := in.p
	seller := in.seller
	if seller.IsAccount && seller.Profile == nil {
		prof := acc.Seller // a revision rebuilt from the stored event
		seller.Profile = &prof
	}
	// The rules, or a person's determination (manual), decide on the
	// seller's facts: those the event states, the account's profile for
	// its own seller, and the account's running totals (below).
	manual, rates := determine, s.e.Settings().Rates
	determine = func(vin vat.Input) vat.Determination {
		vin.Buyer.Business = in.buyer.BusinessStatus == parties.BusinessStatusB2B
		facts := seller
		facts.CrossBorder = vin.Seller.CrossBorder
		if manual != nil {
			return manual(facts.Input(vin.Buyer, vin.Supply))
		}
		return parties.DetermineWithUnknowns(rates, facts, vin.Buyer, vin.Supply)
	}
	// The account's own seller is decided on the account's Art. 59c
	// running totals, with its opening figures, and the event counts
	// toward them, as a settlement does (fiscal totals.go).
	var opening []fiscal.OpeningTotal
	var profile *fiscal.Seller // queued with a re-check: it decides on this profile (fiscalevent.recheck)
	var policy fx.Policy       // the account's Art. 91(2) reading converts its own sales, as its settlements
	if seller.IsAccount {
		opening, profile, policy = seller.Profile.OpeningTotals, seller.Profile, seller.Profile.FXPolicy
	}
	d, err := s.e.Prepare(ctx, acc.ID, fiscal.Supply{
		Payment: p,
		Seller: fiscal.Seller{LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber, OtherEstablishments: seller.OtherEstablishments,
			OpeningTotals: opening, FXPolicy: policy},
		Verification:  verification,
		Registry:      registry,
		Determine:     determine,
		Object:        fiscal.ObjectFiscalEvent,
		AccountTotals: seller.IsAccount,
		RecheckSeller: profile,
	}, now)
	if err != nil {
		return nil, nil, err
	}
	r := &d.Record
	r.Object = fiscal.ObjectFiscalEvent
	d.EventType = EventRecorded
	ev := &Event{
		ID:          r.ID,
		Object:      fiscal.ObjectFiscalEvent,
		Version:     Version,
		Custody:     fiscal.CustodyNone,
		Environment: receipt.EnvProduction,
		Account:     acc.ID,
		CreatedAt:   r.CreatedAt,
		Payment:     r.Settlement,
		Seller: Seller{
			LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber,
			OtherEstablishments: seller.OtherEstablishments, OverThreshold: seller.OverThreshold,
			OptedForDestination: seller.OptedForDestination, AccountSeller: seller.IsAccount,
		},
		Buyer: Buyer{
			Country: in.buyer.Country, BusinessStatus: in.buyer.BusinessStatus, VATNumber: r.Buyer.VATNumber, // as the registry was asked (a prefix supplied)
			Name: in.buyer.Name, PostalCode: in.buyer.PostalCode, Attested: "merchant", Registry: r.Buyer.Registry,
			Evidence: p.Buyer.Evidence, Address: p.Buyer.Address, VATNumberAsGiven: r.Buyer.VATNumberAsGiven,
		},
		Supply:        r.Supply,
		Determination: r.Classification,
		FX:            r.FX,
		Verification:  r.Verification,
		Fee:           r.Fee,
	}
	ev.Production = productionInvariants(in, r.Classification, r.Verification, fxReason(r.ReviewReasons))
	wait := fxReason(r.ReviewReasons) != nil
	if ev.Production.Receipt {
		// The invoice and the frozen receipt format are defined over the
		// settlement record's shape; the seller is the account's full
		// profile (address, legal id), which the invariants guarantee it is:
		// the current one when recorded, and for a revision the one the
		// event was recorded with (profile.go).
		//
		// The invoice is issued on a copy first: when the invoicing law
		// of the supply stops it (a national rate, the customer's
		// address, the rules of EN 16931 and Peppol; fiscal.Engine.Issue
		// then leaves the draft pending review without an invoice), the
		// event gets neither invoice nor receipt, and says why.
		probe := *d
		if err := s.e.Issue(&probe, *seller.Profile); err != nil {
			return nil, nil, err
		}
		if probe.Record.Invoice == nil {
			var why []string
			for _, reason := range probe.Record.ReviewReasons {
				why = append(why, reason.Code+": "+reason.Detail)
			}
			ev.Production.Receipt = false
			ev.Production.Invariants = append(ev.Production.Invariants, Invariant{InvariantInvoiceIssuable, false, strings.Join(why, " ")})
			wait = rateWait(probe.Record.ReviewReasons) != nil // the national currency's
			// Pending, as the probe says: the event counts toward the
			// account's Art. 59c total once, when the revision that issues
			// its invoice is committed, as a settlement does (fiscal.Engine.Commit
			// counts processed states only); its history states why.
			d.Record.ReviewStatus, d.Record.ReviewReasons = probe.Record.ReviewStatus, probe.Record.ReviewReasons
		} else {
			*d = probe
			inv := *r.Invoice
			inv.URL = "/v1/fiscal-events/" + ev.ID + "/ubl"
			ev.Invoice = &inv
			ev.FX.NetEUR, ev.FX.VATEUR, ev.FX.National = r.FX.NetEUR, r.FX.VATEUR, r.FX.National
			ref := r.Receipt
			ev.Receipt = &ref
		}
	}
	d.Document = func(sealed *fiscal.Record) ([]byte, error) {
		out := *ev
		out.Ledger = sealed.Ledger
		if out.Invoice != nil && sealed.Invoice != nil {
			// The invoice is numbered in the committer: take its id and
			// hash from the sealed record, keep the event's URL.
			inv := *sealed.Invoice
			inv.URL = out.Invoice.URL
			out.Invoice = &inv
		}
		if sealed.Revision > 1 {
			out.Revision, out.History = sealed.Revision, sealed.History
			if out.Receipt != nil {
				ref := sealed.Receipt // the revision's own receipt
				out.Receipt = &ref
			}
		}
		return json.Marshal(out)
	}
	if err := syncProfile(d, seller, ev.pending()); err != nil {
		return nil, nil, err
	}
	return d, ev, errors.Join(syncWait(d, fiscal.BucketFXWait, p.Timestamp, "", wait),
		syncWait(d, fiscal.BucketRateTableWait, p.Timestamp, rates.Version(), outsideTable(r.Classification.Reasons)),
		syncWait(d, fiscal.BucketRegistrationWait, p.Timestamp, "", seller.IsAccount && notRegistered(r.Classification.Reasons)))
}

func fxReason(reasons []vat.Reason) *vat.Reason {
	for _, r := range reasons {
		if r.Code == fiscal.ReasonFXRateUnavailable {
			return &r
		}
	}
	return nil
}

// productionInvariants evaluates the EU VAT production invariants in their
// fixed order.
func productionInvariants(in input, det vat.Determination, v fiscal.Verification, fxReason *vat.Reason) ProductionCheck {
	chain := "not verified on chain (the network's policy does not require it)"
	if v.Facts != nil {
		chain = "verified on chain"
	}
	// The buyer's country as Determine reads it: Monaco is France (Art.
	// 7(1) Directive 2006/112/EC), the Isle of Man the UK.
	buyerState, buyerEU := vat.MemberStateOf(in.buyer.Country)
	list := []Invariant{
		{InvariantPaymentSupported, true, fmt.Sprintf("%s %s %s on %s, %s", in.p.Protocol, in.p.Scheme, in.p.Asset, in.p.Network, chain)},
		{InvariantSellerIsAccount, in.seller.IsAccount, "the seller in the body is the authenticated account's seller (legal name, country and VAT number)"},
		{InvariantBuyerInEU, buyerEU, "the buyer's attested country is an EU-27 member state"},
		{InvariantDeterminedEU, det.Determined() && det.Ruleset == vat.RulesetEU, "the determination is DETERMINED under " + vat.RulesetEU},
		{InvariantFXRateAvailable, fxReason == nil, "an ECB reference rate exists for the settlement date"},
	}
	if !list[1].Holds {
		list[1].Detail = "the seller in the body is not the authenticated account's seller; the service signs production receipts only for its account's own sales (the ingest key identifies the account and its seller)"
	}
	if buyerEU && !parties.InEU27(in.buyer.Country) {
		list[2].Detail = fmt.Sprintf("the buyer's attested country %s is treated as %s, an EU-27 member state (Art. 7(1) Directive 2006/112/EC)", shown.Quote(in.buyer.Country), buyerState)
	}
	if !list[2].Holds {
		list[2].Detail = fmt.Sprintf("the buyer's country %s is not an EU-27 member state; receipt 1.0.0 covers eu-vat only", shown.Quote(in.buyer.Country))
		if in.buyer.Country == "" {
			list[2].Detail = "the buyer's country is not attested"
		}
	}
	if !list[3].Holds {
		list[3].Detail = fmt.Sprintf("the determination is %s under %s", det.Status, det.Ruleset)
	}
	if !list[4].Holds {
		list[4].Detail = fxReason.Detail
	}
	ok := true
	for _, inv := range list {
		ok = ok && inv.Holds
	}
	return ProductionCheck{Receipt: ok, Invariants: list}
}

// ReasonCorridorNotCovered is the manual-review reason of a fiscal event
// between parties that are both outside the EU and UK VAT areas (package
// vat decides it, vat.Coverage).
const ReasonCorridorNotCovered = vat.ReasonCorridorNotCovered

// Get returns the account's fiscal event id as stored. Another account's
// event, or a settlement record, is reported as not found.
func (s *Service) Get(ctx context.Context, accountID, id string) (*Event, []byte, error) {
	ev, raw, err := s.load(id)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
		return nil, nil, notFound("fiscal event " + shown.Bare(id))
	}
	if err != nil {
		return nil, nil, err
	}
	if ev.Account != accountID || ev.Object != fiscal.ObjectFiscalEvent {
		return nil, nil, notFound("fiscal event " + shown.Bare(id))
	}
	return ev, raw, nil
}

// Invoice returns the UBL bytes of the account's fiscal event id and their
// SHA-256 (hex); only events that met the production invariants have one.
func (s *Service) Invoice(ctx context.Context, accountID, id string) ([]byte, string, error) {
	ev, _, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, "", err
	}
	if ev.Invoice == nil {
		return nil, "", &fiscal.Error{Code: fiscal.CodeNotFound, Detail: fmt.Sprintf("fiscal event %s has no invoice: the EU VAT production invariants did not hold (see production.invariants)", id)}
	}
	return s.e.StoredInvoice(id, ev.Invoice.UBLSHA256)
}

// List returns a page of the account's fiscal events, newest first
// (listing.List with q.Object fiscal.ObjectFiscalEvent).
func (s *Service) List(ctx context.Context, accountID string, q listing.Query) (*listing.Page, error) {
	b, err := s.e.Books(accountID)
	if err != nil {
		return nil, err
	}
	q.Object = fiscal.ObjectFiscalEvent
	return listing.List(ctx, b, q)
}

// load reads the current stored document of id, which may be a fiscal
// event or a settlement record (Object tells).
func (s *Service) load(id string) (*Event, []byte, error) {
	return decodeEvent(s.e.Document(id))
}

// entryEvent reads the event recordID of the books' account as its entry
// entryID stored it (its first entry, or one of its revisions), verified
// against the log as a webhook's body is (Books.EventDocument).
func entryEvent(b *fiscal.Books, recordID, entryID string) (*Event, []byte, error) {
	return decodeEvent(b.EventDocument(fiscal.Event{ID: "evt_" + entryID, Account: b.Account().ID, RecordID: recordID, EntryID: entryID}))
}

// decodeEvent decodes a stored fiscal event.
func decodeEvent(raw []byte, err error) (*Event, []byte, error) {
	if err != nil {
		return nil, nil, err
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored fiscal event is unreadable", Err: err}
	}
	return &ev, raw, nil
}

// hash is the SHA-256 of v's JSON encoding.
func hash(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
}

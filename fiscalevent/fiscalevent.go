package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// FiscalEventRequest is the body of POST /v1/fiscal-events (spec §2.3): a
// settled payment with its parties named in the body, from any ISO 3166-1
// country. Required: payment (its §2.1 fields, asset and scheme optional),
// seller.legalName, seller.country and supply.kind. buyer.country may be
// absent, which makes the determination MANUAL_REVIEW_REQUIRED (the VAT is
// never treated as 0 %).
type FiscalEventRequest struct {
	Payment EventPayment `json:"payment"`
	Seller  EventSeller  `json:"seller"`
	Buyer   EventBuyer   `json:"buyer"`
	Supply  EventSupply  `json:"supply"`
}

// EventPayment is the payment of a fiscal event: the payment fields of the
// settlement request (spec §2.1), validated exactly as POST /settlements
// validates them.
type EventPayment struct {
	AmountUSDC     string `json:"amountUsdc"`
	TxHash         string `json:"txHash"`
	Timestamp      string `json:"timestamp"`
	PayerWallet    string `json:"payerWallet"`
	ReceiverWallet string `json:"receiverWallet"`
	Network        string `json:"network"`
	Asset          string `json:"asset,omitempty"`
	Scheme         string `json:"scheme,omitempty"`
}

// DecodeFiscalEventRequest reads one JSON object from r as strictly as
// DecodeSettlementRequest: unknown or duplicate members, JSON numbers where
// strings are required and trailing data are BAD_REQUEST errors.
func DecodeFiscalEventRequest(r io.Reader) (FiscalEventRequest, error) {
	var req FiscalEventRequest
	err := decodeStrict(r, &req)
	return req, err
}

// FiscalEventVersion is the in-band version of the stored fiscal event
// format; fields may be added, none are renamed.
const FiscalEventVersion = "fiscal402.fiscal_event/1"

// objectFiscalEvent is the "object" member of a fiscal event. A fiscal event
// and a settlement record share the event id space (one per payment) and the
// heads bucket; the object member tells them apart.
const objectFiscalEvent = "fiscal_event"

// indexAccountFiscalEvents lists an account's fiscal events by creation time
// (the counterpart of indexAccountTime, which lists settlements).
const indexAccountFiscalEvents = "account-fiscal-events" // account \x00 createdAt (8-byte big-endian unix nanos) event id → event id

// FiscalEvent is a persisted fiscal event: the 201 body of POST
// /v1/fiscal-events and the body of GET /v1/fiscal-events/{id}. It is stored
// as JSON exactly as served. Determination is the vat package's answer for
// the corridor; Production says whether the EU VAT production invariants
// held, and Receipt and Invoice are present exactly when they did.
type FiscalEvent struct {
	ID            string            `json:"id"`      // "x402-<32 hex>", the same id a settlement of this payment would have
	Object        string            `json:"object"`  // "fiscal_event"
	Version       string            `json:"version"` // FiscalEventVersion
	Custody       string            `json:"custody"` // always "none"
	Environment   string            `json:"environment"`
	Account       string            `json:"account"`
	CreatedAt     string            `json:"createdAt"`
	Payment       RecordPayment     `json:"payment"`
	Seller        FiscalEventSeller `json:"seller"`
	Buyer         FiscalEventBuyer  `json:"buyer"`
	Supply        RecordSupply      `json:"supply"`
	Determination vat.Determination `json:"determination"`
	FX            RecordFX          `json:"fx"`
	Verification  Verification      `json:"verification"`
	Production    ProductionCheck   `json:"production"`
	Invoice       *InvoiceRef       `json:"invoice,omitempty"`
	Receipt       *ReceiptRef       `json:"receipt,omitempty"`
	Fee           *Fee              `json:"fee,omitempty"`
	Ledger        LedgerRef         `json:"ledger"`
}

// FiscalEventSeller is the seller as recorded: the account's own profile when
// the body named the account's seller (AccountSeller), else the body's facts,
// with unknown threshold facts left out.
type FiscalEventSeller struct {
	LegalName           string   `json:"legalName,omitempty"` // always present on a fiscal event
	Country             string   `json:"country"`
	VATNumber           string   `json:"vatNumber,omitempty"`
	OtherEstablishments []string `json:"otherEstablishments,omitempty"`
	OverThreshold       *bool    `json:"overThreshold,omitempty"`
	OptedForDestination *bool    `json:"optedForDestination,omitempty"`
	AccountSeller       bool     `json:"accountSeller"`
}

// FiscalEventBuyer is the buyer as attested, with the registry's answer when
// a VAT number was looked up.
type FiscalEventBuyer struct {
	Country        string       `json:"country,omitempty"`
	BusinessStatus string       `json:"businessStatus"`
	VATNumber      string       `json:"vatNumber,omitempty"`
	Name           string       `json:"name,omitempty"`
	PostalCode     string       `json:"postalCode,omitempty"`
	Attested       string       `json:"attestedBy"` // "merchant": the caller attests the buyer
	Registry       *vies.Result `json:"registry,omitempty"`
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
	InvariantBuyerInEU        = "buyer_in_eu"       // the buyer's attested country is an EU-27 member state
	InvariantDeterminedEU     = "determined_eu_vat" // the determination is DETERMINED under eu-vat-oss-2026.09
	InvariantFXRateAvailable  = "fx_rate_available" // an ECB reference rate exists for the settlement date
)

// FiscalEventResult is the answer of RecordFiscalEvent.
type FiscalEventResult struct {
	Outcome Outcome
	Event   *FiscalEvent
	JSON    []byte // the event exactly as stored and served
}

// fiscalEventInput is a validated fiscal event request.
type fiscalEventInput struct {
	s      settlement // the payment, with the buyer and supply copied in
	seller sellerFacts
	buyer  partyBuyer
}

// validate checks a fiscal event request. Payment fields are checked by the
// settlement rules (their errors point into /payment); parties by the rules
// of parties.go.
func (req FiscalEventRequest) validate(now time.Time, acc *Account) (fiscalEventInput, error) {
	var in fiscalEventInput
	p := req.Payment
	s, err := SettlementRequest{
		AmountUSDC: p.AmountUSDC, TxHash: p.TxHash, Timestamp: p.Timestamp, PayerWallet: p.PayerWallet,
		ReceiverWallet: p.ReceiverWallet, Network: p.Network, Asset: p.Asset, Scheme: p.Scheme,
	}.validate(now)
	if err != nil {
		return in, underField("/payment", err)
	}
	seller, err := parseEventSeller("/seller", req.Seller, true)
	if err != nil {
		return in, err
	}
	if m, ok, err := matchAccountSeller("/seller", seller, acc); err != nil {
		return in, err
	} else if ok {
		seller = m
	}
	buyer, err := parseEventBuyer("/buyer", req.Buyer)
	if err != nil {
		return in, err
	}
	kind, desc, err := parseEventSupply("/supply", req.Supply)
	if err != nil {
		return in, err
	}
	if desc == "" {
		desc = acc.Seller.ItemName
		if !seller.IsAccount {
			desc = "Digital service"
		}
	}
	s.Buyer = buyerFacts{Country: buyer.Country, PostalCode: buyer.PostalCode, VATNumber: buyer.VATNumber, Name: buyer.Name}
	s.SupplyKind, s.Description = kind, desc
	return fiscalEventInput{s: s, seller: seller, buyer: buyer}, nil
}

// underField moves the JSON pointer of an *Error under prefix: the payment
// of a fiscal event is validated by the settlement rules, whose pointers are
// relative to the payment object.
func underField(prefix string, err error) error {
	var fe *Error
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
// endpoints.
func (in fiscalEventInput) fingerprint() []byte {
	b, _ := json.Marshal(struct {
		Kind   string
		S      []byte
		Seller sellerFacts
		BS     string
	}{objectFiscalEvent + "/1", in.s.fingerprint(), in.seller, in.buyer.BusinessStatus})
	h := sha256.Sum256(b)
	return h[:]
}

// RecordFiscalEvent persists a fiscal event for the account: one ledger
// entry (event type fiscal_event.recorded) holding the event, its
// determination, and, when the EU VAT production invariants hold, a
// production receipt and UBL invoice. A nil error means the entry is durably
// in the ledger.
//
// A payment is recorded once, by POST /settlements or by POST
// /v1/fiscal-events: both take the same (network, txHash) claim in one
// ledger transaction. A duplicate fiscal event of the same account answers
// Existing; a payment this account recorded as a settlement is a
// PAYMENT_ALREADY_RECORDED conflict naming it; another account's payment is a
// SETTLEMENT_CONFLICT. The Idempotency-Key space is the account's, shared
// with settlements.
func (e *Engine) RecordFiscalEvent(ctx context.Context, accountID string, req FiscalEventRequest, idempotencyKey string) (*FiscalEventResult, error) {
	acc, ok := e.accounts.Get(accountID)
	if !ok {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	now := e.clock().UTC()
	in, err := req.validate(now, acc)
	if err != nil {
		return nil, err
	}
	claims := fiscalEventClaims(acc.ID, in, idempotencyKey)
	if res, err := e.eventFromLedger(acc.ID, claims); res != nil || err != nil {
		return res, err
	}
	en, err := e.prepareFiscalEvent(ctx, acc, in, now)
	if err != nil {
		return nil, err
	}
	en.ledgerClaims = claims
	en.postings = append(en.postings, ledger.Posting{Index: indexAccountFiscalEvents, Key: accountTimeKey(acc.ID, now, en.id)})
	stored, res, err := e.write(ctx, en)
	if err != nil {
		return nil, underField("/payment", err)
	}
	if res.Existing {
		o := Existing
		for _, c := range claims {
			if holder, _, err := e.ledger.ClaimHolder(c.Space, c.Key); err == nil && holder == res.ID {
				o = outcomeOf(c)
				break
			}
		}
		return e.storedFiscalEvent(acc.ID, res.ID, o)
	}
	var ev FiscalEvent
	if err := json.Unmarshal(stored, &ev); err != nil {
		return nil, &Error{Code: CodeInternal, Err: err}
	}
	return &FiscalEventResult{Outcome: Created, Event: &ev, JSON: stored}, nil
}

// fiscalEventClaims are the claims of settlementClaims with the fiscal
// event's fingerprint: the Idempotency-Key first, then the payment, unique
// per (network, txHash) across accounts and across both kinds of record.
func fiscalEventClaims(accountID string, in fiscalEventInput, idemKey string) []ledger.Claim {
	claims := settlementClaims(accountID, in.s, idemKey)
	if idemKey != "" {
		claims[0].Fingerprint = in.fingerprint()
	}
	return claims
}

// eventFromLedger answers a replay or duplicate from the ledger, like
// answerFromLedger does for settlements.
func (e *Engine) eventFromLedger(accountID string, claims []ledger.Claim) (*FiscalEventResult, error) {
	for _, c := range claims {
		holder, fp, err := e.ledger.ClaimHolder(c.Space, c.Key)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, storeError(err)
		}
		if string(fp) != string(c.Fingerprint) {
			return nil, underField("/payment", claimConflict(c))
		}
		return e.storedFiscalEvent(accountID, holder, outcomeOf(c))
	}
	return nil, nil
}

// storedFiscalEvent answers with the stored event id; a settlement record
// holding the payment is a PAYMENT_ALREADY_RECORDED conflict.
func (e *Engine) storedFiscalEvent(accountID, id string, o Outcome) (*FiscalEventResult, error) {
	ev, raw, err := e.loadFiscalEvent(id)
	if err != nil {
		return nil, err
	}
	if ev.Object != objectFiscalEvent {
		return nil, alreadyRecorded(ev.Object, id)
	}
	if ev.Account != accountID {
		return nil, underField("/payment", claimConflict(ledger.Claim{Space: claimPayment}))
	}
	return &FiscalEventResult{Outcome: o, Event: ev, JSON: raw}, nil
}

// alreadyRecorded is the conflict of a payment this account recorded as the
// other kind of record: answering with a record of another shape would
// surprise a client, so the answer names where the record is instead.
func alreadyRecorded(object, id string) *Error {
	where := "/settlements/" + id
	field := "/payment/txHash"
	if object == objectFiscalEvent {
		where = "/v1/fiscal-events/" + id
		field = "/txHash"
	}
	return &Error{Code: CodePaymentAlreadyRecorded, Field: field,
		Detail: fmt.Sprintf("this (network, txHash) payment is already recorded as %s %s; read it at %s", strings.ReplaceAll(object, "_", " "), id, where)}
}

// prepareFiscalEvent does the work that needs no ledger: chain verification
// (as for settlements), registry lookup, determination, FX, the invariants
// and, when they hold, the invoice and the receipt claims.
func (e *Engine) prepareFiscalEvent(ctx context.Context, acc *Account, in fiscalEventInput, now time.Time) (*entry, error) {
	s := in.s
	id := EventID(s.Network, s.TxHash)
	verification, err := e.verifyOnChain(ctx, s)
	if err != nil {
		return nil, underField("/payment", err)
	}
	reg := e.lookupVATNumber(ctx, in.buyer.VATNumber)
	regCheck := registryCheck(reg)
	det := determineWithUnknowns(in.seller, vat.Buyer{
		Country:    in.buyer.Country,
		PostalCode: in.buyer.PostalCode,
		Business:   in.buyer.BusinessStatus == BusinessStatusB2B,
		VATNumber:  in.buyer.VATNumber,
		Registry:   regCheck,
	}, vat.Supply{Kind: s.SupplyKind, Date: s.Timestamp})
	det = coverCorridor(det, in.seller.Country, in.buyer.Country)
	rfx, gross, fxReason, err := e.convert(ctx, s)
	if err != nil {
		return nil, err
	}

	ev := FiscalEvent{
		ID:          id,
		Object:      objectFiscalEvent,
		Version:     FiscalEventVersion,
		Custody:     "none",
		Environment: receipt.EnvProduction,
		Account:     acc.ID,
		CreatedAt:   now.Format(time.RFC3339Nano),
		Payment: RecordPayment{
			Protocol: s.Protocol, Network: s.Network, TxHash: s.TxHash, Asset: s.Asset,
			AssetContract: usdcContracts[s.Network], Scheme: s.Scheme, AmountUSDC: s.AmountString,
			Timestamp: s.Timestamp.Format(time.RFC3339Nano), PayerWallet: s.PayerWallet, ReceiverWallet: s.ReceiverWallet,
		},
		Seller: FiscalEventSeller{
			LegalName: in.seller.LegalName, Country: in.seller.Country, VATNumber: in.seller.VATNumber,
			OtherEstablishments: in.seller.OtherEstablishments, OverThreshold: in.seller.OverThreshold,
			OptedForDestination: in.seller.OptedForDestination, AccountSeller: in.seller.IsAccount,
		},
		Buyer: FiscalEventBuyer{
			Country: in.buyer.Country, BusinessStatus: in.buyer.BusinessStatus, VATNumber: in.buyer.VATNumber,
			Name: in.buyer.Name, PostalCode: in.buyer.PostalCode, Attested: "merchant", Registry: reg,
		},
		Supply:        RecordSupply{Kind: s.SupplyKind, Description: s.Description},
		Determination: det,
		FX:            rfx,
		Verification:  verification,
	}
	if verification.Facts != nil {
		li := int64(verification.Facts.LogIndex)
		ev.Payment.LogIndex = &li
	}
	if rfx.GrossEUR != "" {
		ev.Fee = e.pricing.fee(gross)
		if det.Determined() {
			net, tax := splitGross(gross, det)
			ev.FX.NetEUR, ev.FX.VATEUR = net.StringFixed(2), tax.StringFixed(2)
		}
	}
	ev.Production = productionInvariants(in, det, verification, fxReason)

	en := &entry{id: id, createdAt: now, eventType: EventFiscalEventRecorded}
	en.record = Record{ID: id, Account: acc.ID} // what the outbox event and the heads pointer need
	if ev.Production.Receipt {
		if err := e.attachProduction(en, &ev, acc, gross, now); err != nil {
			return nil, err
		}
	}
	en.seal = func(index int64) ([]byte, string, error) { return e.sealFiscalEvent(en, ev, index) }
	return en, nil
}

// productionInvariants evaluates the EU VAT production invariants in their
// fixed order.
func productionInvariants(in fiscalEventInput, det vat.Determination, v Verification, fxReason *vat.Reason) ProductionCheck {
	chain := "not verified on chain (the network's policy does not require it)"
	if v.Facts != nil {
		chain = "verified on chain"
	}
	list := []Invariant{
		{InvariantPaymentSupported, true, fmt.Sprintf("%s %s %s on %s, %s", in.s.Protocol, in.s.Scheme, in.s.Asset, in.s.Network, chain)},
		{InvariantSellerIsAccount, in.seller.IsAccount, "the seller in the body is the authenticated account's seller (legal name, country and VAT number)"},
		{InvariantBuyerInEU, inEU27(in.buyer.Country), "the buyer's attested country is an EU-27 member state"},
		{InvariantDeterminedEU, det.Determined() && det.Ruleset == vat.RulesetEU, "the determination is DETERMINED under " + vat.RulesetEU},
		{InvariantFXRateAvailable, fxReason == nil, "an ECB reference rate exists for the settlement date"},
	}
	if !list[1].Holds {
		list[1].Detail = "the seller in the body is not the authenticated account's seller; the service signs production receipts only for its account's own sales (spec §5.3)"
	}
	if !list[2].Holds {
		list[2].Detail = fmt.Sprintf("the buyer's country %q is not an EU-27 member state; receipt 1.0.0 covers eu-vat only", in.buyer.Country)
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

// coverCorridor turns a determination for a corridor the rulesets do not
// cover into a manual review: with neither party in the EU or the UK VAT
// area, "outside the scope of EU VAT" is true but says nothing about the
// taxes that do apply (spec §3: MANUAL_REVIEW_REQUIRED where the rules do not
// cover the corridor).
func coverCorridor(det vat.Determination, seller, buyer string) vat.Determination {
	if buyer == "" || inEU27(seller) || inUKVATArea(seller) || inEU27(buyer) || inUKVATArea(buyer) || det.Regime != vat.RegimeOutsideScope {
		return det
	}
	d := det
	d.Status = vat.StatusManualReview
	d.Category, d.RatePercent, d.VATEX, d.ExemptionReason, d.InvoiceNote, d.RateKind, d.RateSource = "", nil, "", "", "", "", nil
	d.Reasons = append([]vat.Reason{{
		Code: ReasonCorridorNotCovered,
		Detail: fmt.Sprintf("Neither the seller (%s) nor the buyer (%s) is in the EU or UK VAT area: the supply is outside the scope of EU VAT, but the rulesets (%s, %s) do not cover the taxes of this corridor.",
			seller, buyer, vat.RulesetEU, vat.RulesetUK),
	}}, det.Reasons...)
	return d
}

// attachProduction renders the invoice and prepares the receipt claims of a
// fiscal event that meets the production invariants. The record built here
// maps the event onto the settlement record's shape, which the invoice and
// the frozen receipt format are defined over; the seller is the account's
// full profile (address, legal id), which the invariants guarantee it is.
func (e *Engine) attachProduction(en *entry, ev *FiscalEvent, acc *Account, gross decimal.Decimal, now time.Time) error {
	en.record = Record{
		ID:           ev.ID,
		Object:       objectFiscalEvent,
		Version:      RecordVersion,
		Custody:      "none",
		Environment:  receipt.EnvProduction,
		ReviewStatus: StatusProcessed,
		Account:      acc.ID,
		CreatedAt:    ev.CreatedAt,
		Settlement:   ev.Payment,
		Seller: RecordSeller{
			LegalName: acc.Seller.LegalName, VATNumber: acc.Seller.VATNumber, LegalID: acc.Seller.LegalID,
			Country: acc.Seller.Country, Address: acc.Seller.Address,
		},
		Buyer: RecordBuyer{
			Country: ev.Buyer.Country, PostalCode: ev.Buyer.PostalCode, VATNumber: ev.Buyer.VATNumber,
			Name: ev.Buyer.Name, Attested: "merchant", Registry: ev.Buyer.Registry,
		},
		Supply:         ev.Supply,
		Classification: ev.Determination,
		FX:             ev.FX,
		Verification:   ev.Verification,
		Fee:            ev.Fee,
		Receipt:        ReceiptRef{ID: ReceiptID(ev.ID), Spec: receipt.SpecV1, URL: "/v1/receipts/" + ReceiptID(ev.ID)},
	}
	if err := e.attachInvoice(en, gross, now); err != nil {
		return err
	}
	inv := *en.record.Invoice
	inv.URL = "/v1/fiscal-events/" + ev.ID + "/ubl"
	ev.Invoice = &inv
	ev.FX.NetEUR, ev.FX.VATEUR = en.record.FX.NetEUR, en.record.FX.VATEUR
	ref := en.record.Receipt
	ev.Receipt = &ref
	en.claims = receiptClaims(&en.record, now)
	return nil
}

// sealFiscalEvent fixes the event's log index and returns the stored event
// and the Merkle log leaf: the signed receipt JWS when the production
// invariants held, otherwise the stored event JSON itself, so that the log
// commits to every fiscal event either way. It runs inside the ledger
// transaction and is deterministic for an index.
func (e *Engine) sealFiscalEvent(en *entry, ev FiscalEvent, index int64) ([]byte, string, error) {
	ev.Ledger = LedgerRef{Origin: e.origin, Index: index}
	doc, err := json.Marshal(ev)
	if err != nil {
		return nil, "", err
	}
	if !ev.Production.Receipt {
		return doc, string(doc), nil
	}
	claims := en.claims
	claims.Log = receipt.LogRef{Origin: e.origin, Index: index}
	jws, err := e.keyring.Sign(claims)
	if err != nil {
		return nil, "", fmt.Errorf("fiscal: sign receipt: %w", err)
	}
	return doc, jws, nil
}

// isReceiptLeaf reports whether a ledger leaf is a receipt JWS. A fiscal
// event outside the production invariants has its JSON as the leaf (a JSON
// object starts with '{'; a compact JWS with base64url "eyJ").
func isReceiptLeaf(leaf []byte) bool { return len(leaf) > 0 && leaf[0] != '{' }

// FiscalEvent returns the account's fiscal event id as stored. Another
// account's event, or a settlement record, is reported as not found.
func (e *Engine) FiscalEvent(ctx context.Context, accountID, id string) (*FiscalEvent, []byte, error) {
	ev, raw, err := e.loadFiscalEvent(id)
	if err != nil {
		if CodeOf(err) == CodeNotFound {
			return nil, nil, notFound("fiscal event " + id)
		}
		return nil, nil, err
	}
	if ev.Account != accountID || ev.Object != objectFiscalEvent {
		return nil, nil, notFound("fiscal event " + id)
	}
	return ev, raw, nil
}

// FiscalEventInvoice returns the UBL bytes of the account's fiscal event id
// and their SHA-256 (hex); only events that met the production invariants
// have one.
func (e *Engine) FiscalEventInvoice(ctx context.Context, accountID, id string) ([]byte, string, error) {
	ev, _, err := e.FiscalEvent(ctx, accountID, id)
	if err != nil {
		return nil, "", err
	}
	if ev.Invoice == nil {
		return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("fiscal event %s has no invoice: the EU VAT production invariants did not hold (see production.invariants)", id)}
	}
	entryID, err := e.currentEntryID(id)
	if err != nil {
		return nil, "", err
	}
	return storedInvoice(e.ledger, entryID, ev.Invoice.UBLSHA256)
}

// loadFiscalEvent reads the current stored document of id, which may be a
// fiscal event or a settlement record (Object tells).
func (e *Engine) loadFiscalEvent(id string) (*FiscalEvent, []byte, error) {
	entryID, err := e.currentEntryID(id)
	if err != nil {
		return nil, nil, err
	}
	raw, err := e.ledger.Doc(entryID, docRecord)
	if err != nil {
		return nil, nil, storeError(err)
	}
	var ev FiscalEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored fiscal event is unreadable", Err: err}
	}
	return &ev, raw, nil
}

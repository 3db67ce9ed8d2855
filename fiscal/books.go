package fiscal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// Books are one seller's books in an engine: every call records or reads
// that account's records. Get them with Engine.Books, or open a single
// seller's with Open. Books are safe for concurrent use.
type Books struct {
	e     *Engine
	acc   Account
	owned bool // made by Open: Close closes the engine
}

// Account returns the account the books belong to.
func (b *Books) Account() Account { return b.acc }

// Engine returns the engine the books belong to.
func (b *Books) Engine() *Engine { return b.e }

// Close closes the engine when the books were opened with Open; on books
// from Engine.Books it does nothing (close the engine instead).
func (b *Books) Close() error {
	if b.owned {
		return b.e.Close()
	}
	return nil
}

// Outcome says how a recording call answered.
type Outcome int

const (
	// Created: a new record was appended to the ledger.
	Created Outcome = iota
	// Replayed: the Idempotency-Key was seen before with the same body; the
	// original record is returned.
	Replayed
	// Existing: the (network, txHash) pair was already recorded for this
	// account; the existing record is returned: (network, txHash) is unique.
	Existing
	// Queued: the payment was durably queued for ingest (package ingest);
	// nothing is recorded yet.
	Queued
	// BucketQueuedKeys is the side bucket where package ingest's queue
	// holds the Idempotency-Keys of the payments it queued: the key's
	// claim key (IdempotencyClaim) → the payment's record id. Until the
	// entry is pruned the key names that payment's request, as a recorded
	// key does: any other append claiming it, or binding it to an existing
	// record, is an IDEMPOTENCY_CONFLICT (checked in the committer,
	// keyNotBound), so that the queued payment is never refused its own key.
	BucketQueuedKeys = "ingest-keys"
)

func (o Outcome) String() string {
	switch o {
	case Created:
		return "created"
	case Replayed:
		return "replayed"
	case Existing:
		return "existing"
	case Queued:
		return "queued"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// SettleResult is the answer of a recording call.
type SettleResult struct {
	Outcome Outcome
	Record  *Record
	JSON    []byte // the record exactly as stored and served
}

// Settle turns a settled payment into a fiscal record. The idempotency key
// is optional ("" for none). A nil error means the record is durably in the
// ledger (fsynced) with its receipt.
//
// It validates the request, answers duplicates and idempotent replays from
// the ledger, optionally verifies the payment on chain, classifies it for
// VAT, converts it to EUR, renders the UBL invoice, and appends record,
// invoice and receipt to the ledger in one transaction.
func (b *Books) Settle(ctx context.Context, req SettlementRequest, idempotencyKey string) (*SettleResult, error) {
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	e := b.e
	p, err := req.Payment(e.Now().UTC())
	if err != nil {
		return nil, InputError(err)
	}
	claims := paymentClaims(b.acc.ID, p.Network, p.TxHash, idempotencyKey, p.Fingerprint())
	if e.cfg.Environment == receipt.EnvSandbox {
		claims = nil // simulations of one payment may repeat: each gets its own random id
	}
	if res, err := b.answerFromLedger(claims, &p); res != nil || err != nil {
		return res, err
	}
	verification, err := e.verifyOnChain(ctx, p)
	if err != nil {
		return nil, err
	}
	return b.decideAndCommit(ctx, func() (*Draft, error) {
		// createdAt is read when the record is decided, after the chain
		// was asked, and again when it is decided again: the time index
		// the lists walk is keyed by it, and a record committed long
		// after its createdAt sorts behind records committed before it
		// (listing's cursors, README "Listing").
		d, err := b.draft(ctx, p, verification, e.Now().UTC())
		if err != nil {
			return nil, err
		}
		d.Claims = withLogClaim(claims, b.acc.ID, d.Record.Settlement)
		return d, nil
	})
}

// maxStaleRetries bounds how often a supply is decided again because the
// Art. 59c running total changed under it (a concurrent sale of the same
// account counted first); each retry reads the new total.
const maxStaleRetries = 64

// decideAndCommit makes the draft and commits it, deciding it again while
// the running total it was decided on went stale.
func (b *Books) decideAndCommit(ctx context.Context, decide func() (*Draft, error)) (*SettleResult, error) {
	for attempt := 0; ; attempt++ {
		if attempt == 1 {
			// Lost the race once: decide the account's counting sales one
			// at a time from now on, so that this one gets through.
			b.e.accountLock(b.acc.ID).Lock() // one mutex per account, kept for the engine's life
			defer b.e.accountLock(b.acc.ID).Unlock()
		}
		d, err := decide()
		if err != nil {
			return nil, err
		}
		res, err := b.commitRecord(ctx, d)
		if !errors.Is(err, errStaleTotal) {
			return res, err
		} else if attempt >= maxStaleRetries {
			return nil, &Error{Code: CodeDBUnavailable, Detail: "the account's running totals changed too often while this sale was decided; retry", RetryAfter: time.Second, Err: err}
		}
	}
}

// Recorded answers a payment, or an Idempotency-Key, that the account's
// books already hold, as Settle does before any work: a replay of the key
// (Replayed), a duplicate of the payment (network, txHash) (Existing), or a
// conflict; (nil, nil) when neither is recorded. A way in that learns the
// payment's facts only later (package ingest reads them from the chain)
// asks it first. claimed, when the way in has the payment's facts as a
// caller claims them (x402 documents), is checked against a recorded
// payment as Settle checks its request (PAYMENT_CONFLICT when they differ);
// nil checks nothing beyond the claims.
func (b *Books) Recorded(network, txHash, idemKey string, fingerprint []byte, claimed *Payment) (*SettleResult, error) {
	return b.answerFromLedger(paymentClaims(b.acc.ID, network, txHash, idemKey, fingerprint), claimed)
}

// SettlePayment records a validated payment (SettlementRequest.Payment)
// with its chain verification exactly as Settle does after its checks:
// decided, documented and committed, decided again while the account's
// running total changed under it. edit, run on every draft before its
// commit, adds what the way in adds: at least its claims
// (Draft.ClaimPayment), and record fields or side writes (Draft.Puts) of
// its own. A claim already held answers Replayed or Existing as Settle
// would. A timestamp more than wire.MaxClockSkew after the engine's clock
// is refused (BAD_REQUEST, /timestamp), as SettlementRequest.Payment
// refuses it (the Art. 59c order dates rely on it, totals.go), unless it
// is the block time of the verified chain facts v carries (the chain's,
// not a claim: package ingest).
func (b *Books) SettlePayment(ctx context.Context, p Payment, v Verification, edit func(*Draft)) (*SettleResult, error) {
	if err := InputError(wire.NotFuture("/timestamp", p.Timestamp, b.e.Now())); err != nil && (v.Facts == nil || !v.Facts.BlockTime.Equal(p.Timestamp)) {
		return nil, err
	}
	return b.decideAndCommit(ctx, func() (*Draft, error) {
		d, err := b.draft(ctx, p, v, b.e.Now().UTC()) // createdAt: as Settle
		if err == nil {
			edit(d)
		}
		return d, err
	})
}

// ChainError maps an error of the chain (evmverify) to the engine's:
// CHAIN_VERIFY_FAILED (422) when the chain says no, CHAIN_UNAVAILABLE (503,
// Retry-After) when it cannot be asked or is not final yet, BAD_REQUEST for
// a claim that cannot be asked. A way in that reads the chain itself
// answers with it.
func ChainError(err error) error { return chainError(err) }

// Record returns the current state (newest revision) of the record id.
// Another account's record is reported as not found, not as forbidden: ids
// are not secrets, but their existence in another account is none of the
// caller's business.
func (b *Books) Record(ctx context.Context, id string) (*Record, []byte, error) {
	r, raw, err := decodeRecord(b.e.document(id))
	if err != nil {
		return nil, nil, err
	}
	if r.Account != b.acc.ID || r.Object != ObjectSettlement {
		return nil, nil, notFound("settlement " + bare(id))
	}
	return r, raw, nil
}

// Invoice returns the UBL bytes bound to the record id and their SHA-256
// (hex), exactly as stored when the record was made.
func (b *Books) Invoice(ctx context.Context, id string) ([]byte, string, error) {
	r, _, err := b.Record(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if r.Invoice == nil {
		if inv := r.Invoicing; inv != nil && inv.Invoice == invoicedBySummary {
			return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("settlement %s has no invoice of its own: the summary invoice of %s for its buyer covers it (GET /settlements/%s/invoiced-by)", id, inv.Period, id)}
		}
		if inv := r.Invoicing; inv != nil && inv.Invoice == invoicedNone {
			return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("settlement %s has no invoice: none is required (%s)", id, inv.Basis)}
		}
		return nil, "", &Error{Code: CodeNotFound, Detail: fmt.Sprintf("settlement %s has no invoice: it is %s", id, r.ReviewStatus)}
	}
	return b.e.StoredInvoice(id, r.Invoice.UBLSHA256)
}

// Receipt returns the signed receipt of the record id's current revision
// (id may also be a receipt id, "rcpt_…"), as Engine.Receipt does; another
// account's record is not found.
func (b *Books) Receipt(ctx context.Context, id string) ([]byte, error) {
	recordID := strings.TrimPrefix(id, "rcpt_")
	if i := strings.LastIndex(recordID, revisionIDSeparator); i > 0 {
		recordID = recordID[:i]
	}
	if _, _, err := b.Record(ctx, recordID); err != nil {
		return nil, err
	}
	return b.e.Receipt(ctx, id)
}

// Openings returns the openings of the receipt id (a receipt id, "rcpt_…",
// or a record id, which names its current receipt as Engine.Receipt reads
// it) of one of the account's records: the salts and values of
// its committed personal fields (receipts 3.0.0 and 4.0.0), which let their holder
// show an auditor what the public receipt commits to (receipt.Reveal,
// receipt.VerifyOpening). A receipt of an older version has none (empty).
func (b *Books) Openings(ctx context.Context, id string) ([]byte, error) {
	entryID, isReceiptID := strings.CutPrefix(id, "rcpt_")
	_, head, err := b.e.document(recordIDOf(entryID))
	if err == nil && !isReceiptID { // a record id names its current receipt (Engine.Receipt), not the first
		entryID = head.entry
	}
	if err != nil {
		return nil, notFoundOr(err, "receipt "+bare(id))
	}
	if head.Account != b.acc.ID {
		return nil, notFound("receipt " + bare(id)) // another account's: not this caller's business
	}
	raw, err := b.e.ledger.Doc(entryID, docOpenings)
	if errors.Is(err, ledger.ErrNotFound) {
		if _, err := b.e.ledger.Entry(entryID); err != nil {
			return nil, notFoundOr(err, "receipt "+bare(id))
		}
		return []byte("[]"), nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	return raw, nil
}

// Lookup answers whether a payment, or an Idempotency-Key, is already
// recorded in the account's books, for a way in that answers duplicates
// before doing any work (fiscal events): the id of the record holding it
// and whether the request is a replay of the key (Replayed) or a duplicate
// of the payment (Existing); "" when neither is held. The key used with
// another fingerprint is an IDEMPOTENCY_CONFLICT, the payment recorded by
// another account a SETTLEMENT_CONFLICT. A way in without a payment of its
// own (a refund) passes network "": only the key is looked up.
func (b *Books) Lookup(network, txHash, idemKey string, fingerprint []byte) (string, Outcome, error) {
	var idem *ledger.Claim
	if idemKey != "" {
		c := IdempotencyClaim(b.acc.ID, idemKey, fingerprint)
		idem = &c
		if rec, ok, err := b.boundKey(c); err != nil || ok {
			return rec, Existing, err
		}
	}
	for _, c := range paymentClaims(b.acc.ID, network, txHash, idemKey, fingerprint) {
		if c.Space == claimPayment && network == "" {
			continue
		}
		holder, fp, err := b.e.ledger.ClaimHolder(c.Space, c.Key)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", 0, storeError(err)
		}
		if string(fp) != string(c.Fingerprint) {
			return "", 0, claimConflict(c)
		}
		if c.Space == claimPayment && idem != nil {
			o, err := b.bindKey(*idem, holder, EventID(network, txHash))
			return holder, o, err
		}
		return holder, outcomeOf(c), nil
	}
	return "", 0, nil
}

// answerFromLedger returns the stored answer when a claim is already held:
// a replay or duplicate of this account, or a conflict. (nil, nil) means the
// payment is new as far as the committed ledger knows; the append checks
// again atomically. p, when given, is the request's payment: a duplicate of
// a recorded payment with other facts is a PAYMENT_CONFLICT, not the old
// record.
func (b *Books) answerFromLedger(claims []ledger.Claim, p *Payment) (*SettleResult, error) {
	e := b.e
	var idem *ledger.Claim
	for i := range claims {
		if claims[i].Space == claimIdempotency {
			idem = &claims[i]
		}
	}
	if idem != nil {
		// A key first answered with an existing record (200) is bound to
		// it, though it took no claim.
		if rec, ok, err := b.boundKey(*idem); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return b.storedResult(rec, Existing)
		}
	}
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
		if c.Space == claimIdempotency {
			return b.storedResult(holder, Replayed)
		}
		return b.existingPayment(holder, idem, p)
	}
	return nil, nil
}

// existingPayment answers a duplicate of the recorded payment holder: the
// record, after checking that the request states the same payment facts
// and binding its Idempotency-Key to the answer.
func (b *Books) existingPayment(holder string, idem *ledger.Claim, p *Payment) (*SettleResult, error) {
	res, err := b.storedResult(holder, Existing)
	if err != nil {
		return nil, err
	}
	if p != nil {
		if err := samePayment(res.Record, *p); err != nil {
			return nil, err
		}
	}
	if idem != nil {
		if res.Outcome, err = b.bindKey(*idem, res.Record.ID, EventID(res.Record.Settlement.Network, res.Record.Settlement.TxHash)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// samePayment refuses a duplicate (network, txHash) whose amount, payer,
// receiver or asset differ from the recorded payment's: a transaction
// backs one payment, and answering 200 with the old record would hide the
// contradiction.
func samePayment(r *Record, p Payment) error {
	s := r.Settlement
	diff := p.Differences(s.AmountUSDC, s.PayerWallet, s.ReceiverWallet, s.Asset)
	if len(diff) == 0 {
		return nil
	}
	return &Error{Code: CodePaymentConflict, Field: "/txHash", Detail: fmt.Sprintf(
		"this (network, txHash) payment is already recorded as %s with other facts: %s; nothing was written", r.ID, strings.Join(diff, ", "))}
}

// bucketBoundKeys binds an Idempotency-Key whose first answer was an
// existing record (it took no ledger claim): claim key → fingerprint \x00
// record id (the fingerprint is binary: read up to the last \x00).
const bucketBoundKeys = "idempotency-bound"

// boundKey reads the binding of an Idempotency-Key: the record it answered,
// or IDEMPOTENCY_CONFLICT for another request body.
func (b *Books) boundKey(c ledger.Claim) (string, bool, error) {
	v, err := b.e.ledger.Get(bucketBoundKeys, []byte(c.Key))
	if errors.Is(err, ledger.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, storeError(err)
	}
	// Cut at the last NUL: the fingerprint is binary (a SHA-256 holds a
	// zero byte about one time in eight), a record id never holds one.
	i := bytes.LastIndexByte(v, 0)
	fp, rec, ok := string(v[:max(i, 0)]), string(v[i+1:]), i >= 0
	if !ok {
		return "", false, &Error{Code: CodeInternal, Detail: "stored idempotency binding is unreadable"}
	}
	if fp != string(c.Fingerprint) {
		return "", false, claimConflict(c)
	}
	return rec, true, nil
}

// bindKey binds an Idempotency-Key to the existing record it answered
// (recordID, whose payment's queue entry id is queueID), once:
// the same key with another body is then IDEMPOTENCY_CONFLICT, whatever the
// first answer was. A key bound or claimed concurrently with another body
// is a conflict too: the claim is looked up inside the binding's
// write transaction, which no append commits beside (the ledger's writers
// are serial), and an append that claims the key checks the binding in its
// own (keyNotBound), so that of a binding and a claim of one key with two
// bodies, whichever comes second is the conflict.
//
// It answers Existing, the outcome of a duplicate of the payment; or
// Replayed when the key itself is claimed with this fingerprint, which it
// then leaves as it is: a request of the same key (and so of the same
// payment) committed since the caller looked the key up (on another
// replica, between the look-ups of the key and of the payment), so the
// answer is a replay of that request, not a duplicate.
func (b *Books) bindKey(c ledger.Claim, recordID, queueID string) (Outcome, error) {
	conflict, o := false, Existing
	err := b.e.ledger.Update(func(tx ledger.Tx) error {
		_, fp, held, err := tx.ClaimHolder(c.Space, c.Key)
		switch {
		case err != nil:
			return storeError(err)
		case held && string(fp) != string(c.Fingerprint):
			return claimConflict(c)
		case held:
			o = Replayed
			return nil
		}
		if q := tx.Get(BucketQueuedKeys, []byte(c.Key)); q != nil && string(q) != queueID {
			return claimConflict(c)
		}
		if v := tx.Get(bucketBoundKeys, []byte(c.Key)); v != nil {
			fp := string(v[:max(bytes.LastIndexByte(v, 0), 0)]) // as boundKey cuts it
			conflict = fp != string(c.Fingerprint)
			return nil
		}
		return tx.Put(bucketBoundKeys, []byte(c.Key), []byte(string(c.Fingerprint)+"\x00"+recordID))
	})
	if err != nil {
		return 0, storeError(err) // fn's *Error as it is
	}
	if conflict {
		return 0, claimConflict(c)
	}
	return o, nil
}

// keyNotBound is the committer's check of the append of d that claims the
// Idempotency-Key c: a binding of the key to an existing record
// (bindKey), written since the caller looked, makes the append an
// IDEMPOTENCY_CONFLICT rather than a second answer to one key. The same
// body cannot reach it: it is a duplicate of the bound record's payment,
// whose claim answers first. So does the key held by a queue entry
// (BucketQueuedKeys, by EventID) unless d is the first entry of that
// entry's payment's settlement record.
func keyNotBound(c ledger.Claim, d *Draft) commitCheck {
	key, id := []byte(c.Key), ""
	if d.id == d.Record.ID && d.Record.Object == ObjectSettlement {
		id = EventID(d.Record.Settlement.Network, d.Record.Settlement.TxHash)
	}
	return commitCheck{reads: []ledger.SideKey{{Bucket: bucketBoundKeys, Key: key}, {Bucket: BucketQueuedKeys, Key: key}}, fn: func(h *ledger.Hook) error {
		v, err := h.Get(bucketBoundKeys, key)
		q, qerr := h.Get(BucketQueuedKeys, key)
		if err = cmp.Or(err, qerr); err == nil && (v != nil || q != nil && string(q) != id) {
			return claimConflict(c)
		}
		return err
	}}
}

func outcomeOf(c ledger.Claim) Outcome {
	if c.Space == claimIdempotency {
		return Replayed
	}
	return Existing
}

// storedResult answers with the record holding entry id (a record's first
// entry, or one of its revisions): a duplicate with its current state, a
// replay of an Idempotency-Key with the state the key's own entry stored,
// the first answer byte for byte, whatever revisions came since (the
// same key and body return the original event, as
// draft-ietf-httpapi-idempotency-key-header has a retry get the first
// result). The current state is one GET of the record away.
func (b *Books) storedResult(id string, o Outcome) (*SettleResult, error) {
	entry, doc := recordIDOf(id), b.e.document
	if o == Replayed {
		entry, doc = id, b.e.entryDoc
	}
	r, raw, err := decodeRecord(doc(entry))
	if err != nil {
		return nil, err
	}
	if r.Object != ObjectSettlement {
		return nil, AlreadyRecorded(r.Object, id)
	}
	return &SettleResult{Outcome: o, Record: r, JSON: raw}, nil
}

// commitRecord appends a settlement record's first entry and answers with
// the record as stored; a claim taken by a concurrent request answers as a
// replay or duplicate would.
func (b *Books) commitRecord(ctx context.Context, d *Draft) (*SettleResult, error) {
	stored, res, err := b.e.Commit(ctx, d)
	// The ledger is done with the invoice, leaf and openings (Append
	// returned: committed, refused or never sent), and no answer holds them.
	b.e.release(d)
	if err != nil {
		return nil, err
	}
	if res.Existing {
		// A concurrent request took the claims first: answer as it would
		// have been answered from the ledger.
		if b.e.holderOutcome(d.Claims, res.ID) == Replayed {
			return b.storedResult(res.ID, Replayed)
		}
		var idem *ledger.Claim
		for i := range d.Claims {
			if d.Claims[i].Space == claimIdempotency {
				idem = &d.Claims[i]
			}
		}
		p, err := d.Record.Settlement.Payment(BuyerFacts{})
		if err != nil {
			return nil, &Error{Code: CodeInternal, Err: err}
		}
		return b.existingPayment(res.ID, idem, &p)
	}
	return &SettleResult{Outcome: Created, Record: b.e.committedRecord(d, res.Index), JSON: stored}, nil
}

// committedRecord is the record a committed draft stored (sealedAt), in
// the draft itself: the draft is done, so its record is the answer
// without a 1.4 KB copy per settlement. What else the draft held for
// the commit is dropped, so that an answer kept long keeps little more
// than its record.
func (e *Engine) committedRecord(d *Draft, index int64) *Record {
	r := &d.Record
	e.placeAt(r, index)
	d.Claims, d.Postings, d.Puts, d.Document, d.checks = nil, nil, nil, nil, nil
	d.total, d.claims = nil, nil
	return r
}

// holderOutcome says whether a commit that found its claims held was a
// replay (the Idempotency-Key) or a duplicate (the payment).
func (e *Engine) holderOutcome(claims []ledger.Claim, holderID string) Outcome {
	for _, c := range claims {
		if holder, _, err := e.ledger.ClaimHolder(c.Space, c.Key); err == nil && holder == holderID {
			return outcomeOf(c)
		}
	}
	return Existing
}

// Claim spaces of the ledger. A payment is recorded once, by whatever way
// in: one (network, txHash) claim across accounts; one transfer log per
// record; Idempotency-Keys are one space per account.
const (
	claimIdempotency = "idem"
	claimPayment     = "payment"
	claimPaymentLog  = "payment-log"
	claimRevision    = "revision"
)

// IdempotencyClaim is the claim an Idempotency-Key takes in the account's
// key space (shared by every recording call of the account): the same key
// with another fingerprint is an IDEMPOTENCY_CONFLICT.
func IdempotencyClaim(accountID, key string, fingerprint []byte) ledger.Claim {
	return ledger.Claim{Space: claimIdempotency, Key: accountID + "\x00" + key, Fingerprint: fingerprint}
}

// paymentClaims are the unique keys a payment takes in the ledger, in the
// order they are checked: the Idempotency-Key first (the same key with a
// different body must be a conflict even when the payment exists), then the
// payment itself, unique per (network, txHash) across all accounts.
func paymentClaims(accountID, network, txHash, idemKey string, fingerprint []byte) []ledger.Claim {
	var claims []ledger.Claim
	if idemKey != "" {
		claims = append(claims, IdempotencyClaim(accountID, idemKey, fingerprint))
	}
	return append(claims, ledger.Claim{Space: claimPayment, Key: network + ":" + txHash, Fingerprint: []byte(accountID)})
}

// claimPayment makes the draft take the payment's claims when it is
// committed: the Idempotency-Key ("" for none) with the fingerprint of the
// caller's normalised input, the (network, txHash) of its payment across
// all accounts and kinds of record, and its transfer log when known. A
// claim already held answers Existing, or a conflict, instead of writing.
func (d *Draft) ClaimPayment(idemKey string, fingerprint []byte) {
	s := d.Record.Settlement
	d.Claims = withLogClaim(paymentClaims(d.Record.Account, s.Network, s.TxHash, idemKey, fingerprint), d.Record.Account, s)
}

func logClaim(accountID, network, txHash string, logIndex uint64) ledger.Claim {
	return ledger.Claim{Space: claimPaymentLog, Key: fmt.Sprintf("%s:%s:%d", network, txHash, logIndex), Fingerprint: []byte(accountID)}
}

// withLogClaim adds the log claim of a payment whose log index is known
// (it was read from or verified on chain), unless claims has it already.
func withLogClaim(claims []ledger.Claim, accountID string, p RecordPayment) []ledger.Claim {
	if p.LogIndex == nil || *p.LogIndex < 0 || claims == nil {
		return claims
	}
	c := logClaim(accountID, p.Network, p.TxHash, uint64(*p.LogIndex))
	for _, have := range claims {
		if have.Space == c.Space && have.Key == c.Key {
			return claims
		}
	}
	return append(claims, c)
}

// ClaimConflict is the error of a claim held with another fingerprint.
func claimConflict(c ledger.Claim) *Error {
	switch c.Space {
	case claimIdempotency:
		return &Error{Code: CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key was already used with a different request body"}
	case claimPaymentLog:
		return &Error{Code: CodeSettlementConflict, Field: "/txHash", Detail: "this transfer log already backs a record of another account"}
	case claimPayment:
		return &Error{Code: CodeSettlementConflict, Field: "/txHash", Detail: "this (network, txHash) settlement is already recorded for another account"}
	}
	// Revision claims carry the entry id as fingerprint, so a concurrent
	// writer of the same revision finds it Existing, never in conflict. A
	// claim of an accessory's own space (a refund's transfer) is its to
	// answer: the conflict is the cause.
	return &Error{Code: CodeInternal, Detail: "ledger claim conflict", Err: &ledger.ClaimConflictError{Claim: c}}
}

// AlreadyRecorded is the conflict of a payment this account recorded as the
// other kind of record (a settlement, a fiscal event): answering with a
// record of another shape would surprise a client, so the answer names
// where the record is instead.
func AlreadyRecorded(object, id string) *Error {
	where := "/settlements/" + id
	field := "/payment/txHash"
	if object == ObjectFiscalEvent {
		where = "/v1/fiscal-events/" + id
		field = "/txHash"
	}
	return &Error{Code: CodePaymentAlreadyRecorded, Field: field,
		Detail: fmt.Sprintf("this (network, txHash) payment is already recorded as %s %s; read it at %s", strings.ReplaceAll(object, "_", " "), id, where)}
}

// fingerprintOf hashes a normalised input for the Idempotency-Key claim:
// the same request sent again, whatever its spelling ("1.5" or "1.50",
// member order), has the same fingerprint; any change of meaning does not.
func fingerprintOf(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

// SignStatement signs payload with the engine's receipt key as a statement
// of type typ (receipt.Signer.SignStatement), so that the receipt key set
// verifies it (receipt.VerifyStatement). Package returns signs OSS returns
// with it.
func (b *Books) SignStatement(typ string, payload []byte) (string, error) {
	jws, err := b.e.keyring.SignStatement(typ, payload)
	if err != nil {
		return "", &Error{Code: CodeInternal, Detail: "signing a statement failed", Err: err}
	}
	return jws, nil
}

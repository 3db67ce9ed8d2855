package ingest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/x402"
)

// The ingest queue holds x402 payments that are reported but not recorded
// yet: a "settlement_pending" report (the transaction is submitted, its
// outcome unknown), or any report a caller hands over with EnqueueX402
// because it cannot wait for the chain (an x402 hook runs in the buyer's
// request path: the x402 Go SDK calls its hooks synchronously, go/server.go
// and go/server_hooks.go, https://github.com/x402-foundation/x402). It lives in side buckets of the
// ledger file, so an enqueue is durable (fsynced) before it is
// acknowledged, and the entry's final state is written in the same
// transaction as its record: an entry is never lost and never recorded
// twice (the record's claims make a second record impossible in any case).

// States of a queue entry.
const (
	StateQueued   = "queued"   // waiting for its next attempt
	StateRecorded = "recorded" // the record exists: RecordURL
	StateFailed   = "failed"   // the chain or the ledger refused it for good: LastError; enqueue again to retry
)

// Why an entry was queued.
const (
	reasonSettlementPending = "settlement_pending" // the facilitator's outcome was not known yet
	reasonAsync             = "async"              // the caller asked for durable, asynchronous ingest
)

// NotFoundGrace is how long a queued payment whose transaction no
// node knows keeps being retried before it fails with tx_not_found: a
// facilitator that reported settlement_pending may have submitted through
// a private mempool or a sequencer, where public nodes see the transaction
// only once it is mined (Base mines in about 2 s,
// https://docs.base.org/base-chain/network-information/transaction-finality;
// Ethereum in about 12 s, one slot). Half an hour covers an x402 authorisation's
// validity window many times over.
const NotFoundGrace = 30 * time.Minute

// Retry timing of queue entries: exponential from ingestFirstRetry, at most
// ingestMaxRetry apart, and never sooner than the chain's Retry-After.
const (
	firstRetry = 2 * time.Second
	maxRetry   = 10 * time.Minute
	poll       = 5 * time.Second // the queue loop's longest sleep
	passLimit  = 64              // entries per Process pass
)

// Status is the state of a queued x402 payment: the 202 body of
// POST /v1/x402/settlements and the body of GET /v1/x402/settlements/{id}.
// Its id is derived from (network, tx hash) (fiscal.EventID); the record, once
// made, has an id of its own, which RecordURL names.
type Status struct {
	ID            string `json:"id"`
	Object        string `json:"object"` // "x402_ingest"
	Account       string `json:"account"`
	State         string `json:"state"`  // StateQueued | StateRecorded | StateFailed
	Reason        string `json:"reason"` // "settlement_pending" | "async"
	Network       string `json:"network"`
	TxHash        string `json:"txHash"`
	CreatedAt     string `json:"createdAt"`
	UpdatedAt     string `json:"updatedAt"`
	Attempts      int    `json:"attempts"`
	NextAttemptAt string `json:"nextAttemptAt,omitempty"` // while queued
	LastError     *Error `json:"lastError,omitempty"`
	RecordURL     string `json:"recordUrl,omitempty"` // once recorded: /settlements/{id}
}

// Error is the last error an attempt met, as the API would have answered
// it.
type Error struct {
	Code   fiscal.Code `json:"code"`
	Field  string      `json:"field,omitempty"`
	Detail string      `json:"detail"`
}

// Side buckets of the queue.
const (
	bucketQueue = "ingest"                // event id → queued JSON
	bucketDue   = "ingest-due"            // 8-byte big-endian unix nanos of the next attempt ‖ event id → event id
	bucketKeys  = fiscal.BucketQueuedKeys // account \x00 Idempotency-Key → event id, held against other requests in the engine's committer
	queueFormat = "fiscal402.ingest/1"
)

// queued is a queue entry as stored: its public status and what is
// needed to ingest it, already parsed and validated.
type queued struct {
	Format  string            `json:"format"`
	Status  Status            `json:"status"`
	Input   x402.Payment      `json:"input"`
	Buyer   fiscal.BuyerFacts `json:"buyer"`
	IdemKey string            `json:"idempotencyKey,omitempty"`
	// MoreKeys are the other Idempotency-Keys the entry was queued again
	// under: indexed to it like IdemKey, and freed with it (Prune).
	MoreKeys    []string `json:"moreIdempotencyKeys,omitempty"`
	Fingerprint []byte   `json:"fingerprint"`
	DueAt       int64    `json:"dueAt,omitempty"` // unix nanos of its due key; 0 when not queued
	// GraceFrom is when the entry was last queued again after it failed
	// (RFC 3339; empty: never): the not-found grace counts from it, not
	// from CreatedAt.
	GraceFrom string `json:"graceFrom,omitempty"`
}

func (s *Service) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func idemIndexKey(accountID, key string) []byte { return []byte(accountID + "\x00" + key) }

// EnqueueX402 validates an x402 payment exactly as RecordX402 does,
// without asking the chain, and durably queues it (fsynced) for the queue
// to record. It is what an x402 after-settle hook should call: it is quick,
// and a chain that is slow, down or not final yet cannot lose the payment.
//
// Answers: Outcome Queued with the entry's status (a new entry, or the
// entry already queued for this payment, Result.Replayed when this key
// queued it; a failed entry is queued again, with this request's facts
// and key when they differ: a failed entry frees its keys when it fails,
// and keeps its error in lastError until pruned or attempted again);
// Existing or Replayed with the record when the payment is recorded
// already; NOT_SETTLED for success:false without "settlement_pending";
// SETTLEMENT_CONFLICT when another account queued or recorded the payment,
// or this account queued it with other facts (amount, payer, payee or
// buyer facts: a report that differs only in what the x402 documents add,
// one without the payment payload say, is the entry's, as it is the
// record's once recorded); IDEMPOTENCY_CONFLICT when the
// key belongs to another payment; and the validation errors of RecordX402.
func (s *Service) EnqueueX402(ctx context.Context, in X402) (*Result, error) {
	b, p, buyer, pending, err := s.parseX402(in)
	if err != nil {
		return nil, err
	}
	reason := reasonAsync
	if pending {
		reason = reasonSettlementPending
	}
	return s.enqueue(ctx, b, p, buyer, in.IdempotencyKey, reason)
}

func (s *Service) enqueue(ctx context.Context, b *fiscal.Books, in x402.Payment, buyer fiscal.BuyerFacts, idemKey, reason string) (*Result, error) {
	job := s.x402Ingest(in, buyer, idemKey)
	job.Read = nil
	res, err := s.ingest(ctx, b, job)
	if err != nil {
		return nil, err
	}
	if res != nil {
		return result(res), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	account := b.Account().ID
	now := s.clock().UTC()
	id := fiscal.EventID(in.Network, in.TxHash)
	var status Status
	var replayed bool
	err = s.e.Ledger().Update(func(tx ledger.Tx) error {
		replayed = false // a retried transaction starts again
		var held []byte
		if idemKey != "" {
			if held = tx.Get(bucketKeys, idemIndexKey(account, idemKey)); held != nil && string(held) != id {
				return queuedKeyConflict()
			}
		}
		if raw := tx.Get(bucketQueue, []byte(id)); raw != nil {
			var q queued
			if err := json.Unmarshal(raw, &q); err != nil {
				return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "a stored queue entry is unreadable", Err: err}
			}
			same := bytes.Equal(q.Fingerprint, job.Fingerprint)
			switch {
			case q.Status.Account != account:
				return queuedForAnother("/settleResponse/transaction")
			case q.Status.State == StateFailed && !same:
				// The failed payment reported again with other facts (the
				// buyer's, corrected): the failed request freed its keys
				// (attempt), and this one replaces it, queued under its
				// own key; the previous failure stays in lastError until
				// the next attempt.
				q.Input, q.Buyer, q.Fingerprint, q.IdemKey, q.MoreKeys = in, buyer, job.Fingerprint, idemKey, nil
				q.Status.Reason = reason
				q.Status.State, q.Status.Attempts, q.GraceFrom = StateQueued, 0, now.Format(time.RFC3339Nano)
				if err := q.schedule(tx, now, now); err != nil {
					return err
				}
			case !same && idemKey != "" && q.IdemKey == idemKey:
				return &fiscal.Error{Code: fiscal.CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key was already used with a different request body"}
			case !same && !bytes.Equal(paymentFacts(q.Input, q.Buyer), job.Facts):
				return &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: "/settleResponse/transaction", Detail: "this (network, txHash) settlement is already queued with other facts (amount, payer, payTo or buyer facts differ)"}
			case q.Input.Nonce != "" && in.Nonce != "" && q.Input.Nonce != in.Nonce:
				// Another EIP-3009 authorization (EIP-3009: one
				// authorization, one transfer): not this entry's payment,
				// which the chain checks under the entry's nonce.
				return &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: "/paymentPayload/payload/authorization/nonce", Detail: fmt.Sprintf(
					"this (network, txHash) settlement is already queued as the payment of the EIP-3009 authorization with nonce %s; this report names nonce %s", q.Input.Nonce, in.Nonce)}
			case q.Status.State == StateFailed:
				// Queued again: a review found the not-found grace counted
				// from the first queuing, so that the first attempt failed
				// the entry at once.
				q.Status.State, q.Status.Attempts, q.GraceFrom = StateQueued, 0, now.Format(time.RFC3339Nano)
				if err := q.schedule(tx, now, now); err != nil {
					return err
				}
			default:
				// Still queued, with the same facts: under the key that
				// already names this entry, the request that queued it
				// again, a replay (Idempotent-Replayed). The same payment
				// reported with other x402 claims (without its payment
				// payload, say) is this entry, not a replay of its body.
				replayed = held != nil && same
			}
			if idemKey != "" {
				if err := tx.Put(bucketKeys, idemIndexKey(account, idemKey), []byte(id)); err != nil {
					return err
				}
				if idemKey != q.IdemKey && !slices.Contains(q.MoreKeys, idemKey) {
					// Kept on the entry so that Prune frees it too (a review
					// found it held for ever once the entry was pruned).
					q.MoreKeys = append(q.MoreKeys, idemKey)
					if err := q.put(tx); err != nil {
						return err
					}
				}
			}
			status = q.Status
			return nil
		}
		q := queued{
			Format: queueFormat,
			Status: Status{
				ID: id, Object: "x402_ingest", Account: account, State: StateQueued, Reason: reason,
				Network: in.Network, TxHash: in.TxHash, CreatedAt: now.Format(time.RFC3339Nano),
			},
			Input: in, Buyer: buyer, IdemKey: idemKey, Fingerprint: job.Fingerprint,
		}
		if err := q.schedule(tx, now, now); err != nil {
			return err
		}
		if idemKey != "" {
			if err := tx.Put(bucketKeys, idemIndexKey(account, idemKey), []byte(id)); err != nil {
				return err
			}
		}
		status = q.Status
		return nil
	})
	if err != nil {
		var fe *fiscal.Error
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, fiscal.StoreError(err)
	}
	s.nudge()
	return &Result{Outcome: fiscal.Queued, Queued: &status, Replayed: replayed}, nil
}

func queuedKeyConflict() *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key is already used by another queued settlement"}
}

// queuedKey answers a record of a payment whose Idempotency-Key a queue
// entry holds, before the chain is asked: an entry of another payment is
// an IDEMPOTENCY_CONFLICT (the key names one request); this payment's
// entry with other facts is one too, as EnqueueX402 answers; and this
// payment's entry with the same facts, still queued, is the key's answer,
// a replay of the request that queued it (the queue asks the chain, not
// this call). (nil, nil): record it (no entry holds the key, or this
// payment's entry failed: a synchronous attempt may try again).
func (s *Service) queuedKey(account string, j chainJob) (*Status, error) {
	if j.IdempotencyKey == "" {
		return nil, nil
	}
	var q queued
	var conflict bool
	err := s.e.Ledger().View(func(tx ledger.Tx) error {
		held := tx.Get(bucketKeys, idemIndexKey(account, j.IdempotencyKey))
		id := fiscal.EventID(j.Network, j.TxHash)
		if conflict = held != nil && string(held) != id; held == nil || conflict {
			return nil
		}
		if raw := tx.Get(bucketQueue, []byte(id)); raw != nil {
			return json.Unmarshal(raw, &q)
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, fiscal.StoreError(err)
	case conflict:
		return nil, queuedKeyConflict()
	case q.Status.ID == "":
		return nil, nil
	case !bytes.Equal(q.Fingerprint, j.Fingerprint) && (j.IdempotencyKey == q.IdemKey || !bytes.Equal(paymentFacts(q.Input, q.Buyer), j.Facts)):
		// The entry's own key names its body; a key the entry took from a
		// later report of the same payment (MoreKeys) names that report,
		// whose x402 claims may differ from the entry's.
		return nil, &fiscal.Error{Code: fiscal.CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key was already used with a different request body"}
	case q.Status.State == StateQueued:
		return &q.Status, nil
	}
	return nil, nil
}

// schedule (re)queues the entry for an attempt at due: it replaces the
// entry's due key and writes the entry.
func (q *queued) schedule(tx ledger.Tx, now, due time.Time) error {
	if q.DueAt != 0 {
		if err := tx.Delete(bucketDue, dueKey(q.DueAt, []byte(q.Status.ID))); err != nil {
			return err
		}
	}
	q.DueAt = due.UnixNano()
	q.Status.NextAttemptAt = due.Format(time.RFC3339Nano)
	q.Status.UpdatedAt = now.Format(time.RFC3339Nano)
	if err := tx.Put(bucketDue, dueKey(q.DueAt, []byte(q.Status.ID)), []byte(q.Status.ID)); err != nil {
		return err
	}
	return q.put(tx)
}

func (q *queued) put(tx ledger.Tx) error {
	raw, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return tx.Put(bucketQueue, []byte(q.Status.ID), raw)
}

// finished is the entry in a final state (recorded or failed), as stored,
// and the writes that put it there and remove its due key.
func (q queued) finished(state string, now time.Time, lastErr *Error, recordID string) (queued, []ledger.Put) {
	f := q
	f.Status.State = state
	f.Status.Attempts++
	f.Status.UpdatedAt = now.Format(time.RFC3339Nano)
	f.Status.NextAttemptAt = ""
	f.Status.LastError = lastErr
	if state == StateRecorded {
		f.Status.RecordURL = "/settlements/" + recordID
	}
	f.DueAt = 0
	raw, _ := json.Marshal(f) // plain strings, ints and bytes: cannot fail
	puts := []ledger.Put{{Bucket: bucketQueue, Key: []byte(q.Status.ID), Value: raw}}
	if q.DueAt != 0 {
		puts = append(puts, ledger.Put{Bucket: bucketDue, Key: dueKey(q.DueAt, []byte(q.Status.ID))})
	}
	return f, puts
}

// Process makes one pass over the queue entries that are due by the
// engine clock, oldest first (at most 64): each is recorded as RecordX402
// would (ledger first, then the chain, then one append that also marks the
// entry recorded). An attempt that meets a chain or store that cannot
// answer now (CHAIN_UNAVAILABLE, including a transaction not yet mined or
// not final; DB_UNAVAILABLE; an internal error), or a transaction no node
// knows within NotFoundGrace, is retried later with exponential backoff
// (2 s doubling to 10 min, never before the chain's Retry-After). Any other
// answer (CHAIN_VERIFY_FAILED, a conflict) fails the entry; its status
// keeps the error. An engine restarted with the network's chain mode off,
// or whose endpoints for the network serve another chain (wrong_chain),
// keeps its entries queued (retried every 10 minutes at most) rather than
// failing them: both are the operator's configuration, not the payment. It returns how many entries it attempted; an error means
// the pass stopped early (ctx done, or the queue could not be read or
// written) and is safe to retry.
func (s *Service) Process(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock().UTC()
	type due struct {
		key []byte
		id  string
	}
	var dues []due
	err := s.e.Ledger().View(func(tx ledger.Tx) error {
		limit := dueKey(now.UnixNano()+1, nil)
		return tx.Scan(bucketDue, nil, nil, false, func(k, v []byte) bool {
			if bytes.Compare(k, limit) >= 0 || len(dues) == passLimit {
				return false
			}
			dues = append(dues, due{bytes.Clone(k), string(v)})
			return true
		})
	})
	if err != nil {
		return 0, fiscal.StoreError(err)
	}
	n := 0
	for _, d := range dues {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if err := s.attempt(ctx, d.key, d.id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// attempt makes one attempt at a queue entry and stores its outcome. Only a
// failure to read or write the queue (or ctx) is returned.
func (s *Service) attempt(ctx context.Context, key []byte, id string) error {
	q, err := s.load(id)
	if codeOf(err) == fiscal.CodeNotFound {
		return s.update(func(tx ledger.Tx) error { return tx.Delete(bucketDue, key) })
	}
	if codeOf(err) == fiscal.CodeInternal {
		// An entry this build cannot read (another format, damage): it
		// stays for an operator, out of the due index, so that the
		// entries behind it go on (a review found one such entry
		// stopping the whole queue).
		s.log.Error("x402 ingest entry unreadable; left out of the queue", "id", id, "err", err)
		return s.update(func(tx ledger.Tx) error { return tx.Delete(bucketDue, key) })
	}
	if err != nil {
		return err
	}
	now := s.clock().UTC()
	if q.Status.State != StateQueued || !bytes.Equal(key, dueKey(q.DueAt, []byte(id))) {
		// A due key the entry no longer owns (it cannot arise from this
		// code; removing it keeps the queue from spinning if it ever does).
		return s.update(func(tx ledger.Tx) error { return tx.Delete(bucketDue, key) })
	}
	b, err := s.e.Books(q.Status.Account)
	if err != nil {
		// The account may come back (an accounts file edited and reloaded):
		// the entry waits for it, as for verification turned off, rather
		// than fail for good (a review found the acknowledged payment lost).
		lastErr := &Error{Code: fiscal.CodeNotFound, Detail: "the account that queued this settlement does not exist now; the entry waits for it"}
		return s.update(func(tx ledger.Tx) error {
			q.Status.Attempts++
			q.Status.LastError = lastErr
			return q.schedule(tx, now, now.Add(backoff(q.Status.Attempts)))
		})
	}
	job := s.x402Ingest(q.Input, q.Buyer, q.IdemKey)
	_, job.Puts = q.finished(StateRecorded, now, nil, s.e.RecordID(q.Status.Network, q.Status.TxHash))
	job.FromQueue = true
	res, err := s.record(ctx, b, job)
	switch {
	case err == nil && res.Outcome == fiscal.Created:
		return nil // the append wrote the recorded state
	case err == nil:
		return s.apply(job.Puts) // recorded meanwhile (another path, or a replay)
	case ctx.Err() != nil:
		return ctx.Err() // not an attempt: nothing was written
	}
	lastErr := errorOf(err)
	if delay, retry := retryDelay(err, q, now); retry {
		return s.update(func(tx ledger.Tx) error {
			q.Status.Attempts++
			q.Status.LastError = lastErr
			return q.schedule(tx, now, now.Add(max(delay, backoff(q.Status.Attempts))))
		})
	}
	// Not the detail: a chain's answer names the wallets and the
	// transaction (evmverify), which no log line carries (README "Logs");
	// the account reads it in the entry's lastError.
	reason := ""
	if rej := (*evmverify.RejectedError)(nil); errors.As(err, &rej) {
		reason = rej.Reason
	}
	s.log.Warn("x402 ingest failed", "id", id, "account", q.Status.Account, "code", lastErr.Code, "field", lastErr.Field, "reason", reason)
	_, puts := q.finished(StateFailed, now, lastErr, "")
	return s.update(func(tx ledger.Tx) error {
		if err := applyPuts(tx, puts); err != nil {
			return err
		}
		// The failure is the request's answer, given late: as a
		// synchronous request the chain refuses (422) binds no key, the
		// entry frees its keys now, so that a corrected request may use
		// them at once rather than after Prune (30 days by default). The
		// entry keeps the failure (state failed, lastError) until pruned.
		_, err := q.releaseKeys(tx)
		return err
	})
}

// heldKeys are the key-index keys of the entry's Idempotency-Keys (IdemKey,
// MoreKeys) that still name it: a key freed before and taken since by
// another entry is that entry's.
func (q queued) heldKeys(tx ledger.Tx) [][]byte {
	var held [][]byte
	for _, key := range append([]string{q.IdemKey}, q.MoreKeys...) {
		if k := idemIndexKey(q.Status.Account, key); key != "" && string(tx.Get(bucketKeys, k)) == q.Status.ID {
			held = append(held, k)
		}
	}
	return held
}

// releaseKeys removes from the key index the Idempotency-Keys the entry
// still holds (heldKeys) and returns how many.
func (q queued) releaseKeys(tx ledger.Tx) (int, error) {
	held := q.heldKeys(tx)
	for _, k := range held {
		if err := tx.Delete(bucketKeys, k); err != nil {
			return 0, err
		}
	}
	return len(held), nil
}

// retryDelay says whether an attempt's error is worth retrying, and the
// earliest retry the error itself asks for.
func retryDelay(err error, q queued, now time.Time) (time.Duration, bool) {
	var fe *fiscal.Error
	if !errors.As(err, &fe) {
		return 0, true // not an answer about the payment: never give up on it
	}
	switch fe.Code {
	case fiscal.CodeChainUnavailable, fiscal.CodeDBUnavailable, fiscal.CodeInternal:
		return fe.RetryAfter, true
	case fiscal.CodeChainVerifyRequired:
		return 0, true // the operator turned verification off since: wait for it to come back
	case fiscal.CodeChainVerifyFailed:
		var rej *evmverify.RejectedError
		if !errors.As(err, &rej) {
			return 0, false
		}
		if rej.Reason == evmverify.ReasonWrongChain {
			// Every endpoint of the payment's network serves another
			// chain: the operator's configuration is wrong, the payment
			// is not refuted (the claim's network chose the endpoints).
			// Wait for a correct endpoint, as for verification off.
			return 0, true
		}
		created, _ := time.Parse(time.RFC3339Nano, cmp.Or(q.GraceFrom, q.Status.CreatedAt))
		if rej.Reason == evmverify.ReasonTxNotFound && now.Sub(created) < NotFoundGrace {
			return 0, true
		}
	}
	return 0, false
}

// backoff is the delay before attempt n+1 after n failed attempts.
func backoff(attempts int) time.Duration {
	d := firstRetry
	for i := 1; i < attempts && d < maxRetry; i++ {
		d *= 2
	}
	return min(d, maxRetry)
}

func errorOf(err error) *Error {
	var fe *fiscal.Error
	if errors.As(err, &fe) {
		return &Error{Code: fe.Code, Field: fe.Field, Detail: fe.Detail}
	}
	return &Error{Code: fiscal.CodeInternal, Detail: "internal error"}
}

func codeOf(err error) fiscal.Code {
	var fe *fiscal.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}

func (s *Service) load(id string) (queued, error) {
	var q queued
	raw, err := s.e.Ledger().Get(bucketQueue, []byte(id))
	if errors.Is(err, ledger.ErrNotFound) {
		return q, notFound("x402 ingest " + shown.Bare(id))
	}
	if err != nil {
		return q, fiscal.StoreError(err)
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		return q, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "a stored queue entry is unreadable", Err: err}
	}
	if q.Format != queueFormat {
		return q, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "a stored queue entry has an unknown format", Err: fmt.Errorf("format %q", q.Format)}
	}
	return q, nil
}

func (s *Service) apply(puts []ledger.Put) error {
	return s.update(func(tx ledger.Tx) error { return applyPuts(tx, puts) })
}

func applyPuts(tx ledger.Tx, puts []ledger.Put) error {
	for _, p := range puts {
		var err error
		if p.Value == nil {
			err = tx.Delete(p.Bucket, p.Key)
		} else {
			err = tx.Put(p.Bucket, p.Key, p.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) update(fn func(tx ledger.Tx) error) error {
	if err := s.e.Ledger().Update(fn); err != nil {
		return fiscal.StoreError(err)
	}
	return nil
}

// freeFailedKeys frees the Idempotency-Keys still held by failed entries:
// those that failed before a failing attempt freed them (attempt), which
// would otherwise hold them until pruned. The queue runner does it once,
// at its start. It returns how many keys it freed.
func (s *Service) freeFailedKeys(ctx context.Context) (int, error) {
	var failed []queued
	err := s.e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(bucketQueue, nil, nil, false, func(k, v []byte) bool {
			var q queued
			if json.Unmarshal(v, &q) == nil && q.Status.State == StateFailed && len(q.heldKeys(tx)) > 0 {
				failed = append(failed, q)
			}
			return ctx.Err() == nil
		})
	})
	if err != nil || len(failed) == 0 {
		return 0, cmp.Or(err, ctx.Err())
	}
	n := 0
	err = s.update(func(tx ledger.Tx) error {
		n = 0
		for _, q := range failed {
			raw := tx.Get(bucketQueue, []byte(q.Status.ID))
			var now queued
			if raw == nil || json.Unmarshal(raw, &now) != nil || now.Status.State != StateFailed {
				continue // queued again or pruned since the scan
			}
			freed, err := now.releaseKeys(tx)
			if err != nil {
				return err
			}
			n += freed
		}
		return nil
	})
	return n, err
}

// queueLease is how long a replica holds the queue after its last pass.
const queueLease = 30 * time.Second

// run processes the queue until stop is closed (the engine's Close): a
// pass whenever an entry is due (by the engine clock), when an entry is
// queued, and at least every 5 seconds. Entries survive restarts, so
// stopping loses nothing. Store errors are logged and the pass is retried a
// second later (a minute when an operator must act: passRetry).
func (s *Service) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	if n, err := s.freeFailedKeys(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("x402 ingest: freeing the keys of failed entries", "err", err)
	} else if n > 0 {
		s.log.Info("x402 ingest: freed the Idempotency-Keys of failed entries", "keys", n)
	}
	for ctx.Err() == nil {
		wait := poll
		// Replicas sharing a log take turns through a lease (renewed every
		// pass, at most poll apart): one processes the queue, another
		// takes over within queueLease when it dies. bbolt: always held.
		if held, err := s.e.Ledger().Lease("ingest.queue", queueLease); err != nil || !held {
			timer := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			continue
		}
		if n, err := s.Process(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Error("x402 ingest queue", "err", err)
			wait = passRetry(err)
		} else if n == passLimit {
			wait = 0 // more may be due
		} else if next, ok := s.nextDue(); ok {
			wait = min(max(next.Sub(s.clock()), 0), poll)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-s.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// passRetry is the loop's wait after a pass that failed: a second, or a
// minute when the error lasts until an operator has acted (a ledger halted
// after a failed disk sync, or a damaged file: ledger.NeedsOperator), so
// that it is logged once a minute rather than every second for as long as
// it lasts.
func passRetry(err error) time.Duration {
	if ledger.NeedsOperator(err) {
		return time.Minute
	}
	return time.Second
}

// nextDue returns the time of the earliest due entry.
func (s *Service) nextDue() (time.Time, bool) {
	var at time.Time
	found := false
	_ = s.e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(bucketDue, nil, nil, false, func(k, _ []byte) bool {
			if len(k) >= 8 {
				at, found = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))), true
			}
			return false
		})
	})
	return at, found
}

// Status returns the state of the account's queued x402 payment id: the
// queue entry's id (Status.ID, fiscal.EventID of its network and tx hash),
// not the id of the record it becomes (RecordURL names that one). A
// payment another account queued, or one that was never queued (recorded
// directly by RecordX402), is NOT_FOUND.
func (s *Service) Status(ctx context.Context, accountID, id string) (*Status, error) {
	q, err := s.load(id)
	if err != nil {
		return nil, err
	}
	if q.Status.Account != accountID {
		return nil, notFound("x402 ingest " + shown.Bare(id))
	}
	st := q.Status
	if st.State == StateQueued {
		// Recorded meanwhile by RecordX402 or Settle; the queue entry
		// learns it at its next attempt.
		if b, err := s.e.Books(accountID); err == nil {
			if rid := s.e.RecordID(st.Network, st.TxHash); rid != "" {
				if _, _, err := b.Record(ctx, rid); err == nil {
					st.State, st.NextAttemptAt, st.RecordURL = StateRecorded, "", "/settlements/"+rid
				}
			}
		}
	}
	return &st, nil
}

// dueKey orders due entries by time: 8-byte big-endian unix nanoseconds,
// then the id.
func dueKey(unixNano int64, id []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(unixNano)), id...)
}

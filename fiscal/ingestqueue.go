package fiscal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/ledger"
)

// The ingest queue holds x402 payments that are reported but not recorded
// yet: a "settlement_pending" report (the transaction is submitted, its
// outcome unknown), or any report a caller hands over with EnqueueX402
// because it cannot wait for the chain (an x402 hook runs in the buyer's
// request path: research x402-evm.md §2.2). It lives in side buckets of the
// ledger file, so an enqueue is durable (fsynced) before it is
// acknowledged, and the entry's final state is written in the same
// transaction as its record: an entry is never lost and never recorded
// twice (the record's claims make a second record impossible in any case).

// States of a queue entry.
const (
	IngestQueued   = "queued"   // waiting for its next attempt
	IngestRecorded = "recorded" // the record exists: RecordURL
	IngestFailed   = "failed"   // the chain or the ledger refused it for good: LastError; enqueue again to retry
)

// Why an entry was queued.
const (
	ingestReasonSettlementPending = "settlement_pending" // the facilitator's outcome was not known yet
	ingestReasonAsync             = "async"              // the caller asked for durable, asynchronous ingest
)

// IngestNotFoundGrace is how long a queued payment whose transaction no
// node knows keeps being retried before it fails with tx_not_found: a
// facilitator that reported settlement_pending may have submitted through
// a private mempool or a sequencer, where public nodes see the transaction
// only once it is mined (Base mines in about 2 s, Ethereum in about 12 s;
// research x402-evm.md §3). Half an hour covers an x402 authorisation's
// validity window many times over.
const IngestNotFoundGrace = 30 * time.Minute

// Retry timing of queue entries: exponential from ingestFirstRetry, at most
// ingestMaxRetry apart, and never sooner than the chain's Retry-After.
const (
	ingestFirstRetry = 2 * time.Second
	ingestMaxRetry   = 10 * time.Minute
	ingestPoll       = 5 * time.Second // RunIngestQueue's longest sleep
	ingestPassLimit  = 64              // entries per ProcessIngestQueue pass
)

// IngestStatus is the state of a queued x402 payment: the 202 body of
// POST /v1/x402/settlements and the body of GET /v1/x402/settlements/{id}.
// Its id is the id the record gets (the event id of (network, tx hash)).
type IngestStatus struct {
	ID            string       `json:"id"`
	Object        string       `json:"object"` // "x402_ingest"
	Account       string       `json:"account"`
	State         string       `json:"state"`  // IngestQueued | IngestRecorded | IngestFailed
	Reason        string       `json:"reason"` // "settlement_pending" | "async"
	Network       string       `json:"network"`
	TxHash        string       `json:"txHash"`
	CreatedAt     string       `json:"createdAt"`
	UpdatedAt     string       `json:"updatedAt"`
	Attempts      int          `json:"attempts"`
	NextAttemptAt string       `json:"nextAttemptAt,omitempty"` // while queued
	LastError     *IngestError `json:"lastError,omitempty"`
	RecordURL     string       `json:"recordUrl,omitempty"` // once recorded: /settlements/{id}
}

// IngestError is the last error an attempt met, as the API would have
// answered it.
type IngestError struct {
	Code   Code   `json:"code"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
}

// Side buckets of the queue.
const (
	bucketIngest     = "ingest"      // event id → queuedIngest JSON
	bucketIngestDue  = "ingest-due"  // 8-byte big-endian unix nanos of the next attempt ‖ event id → event id
	bucketIngestKeys = "ingest-keys" // account \x00 Idempotency-Key → event id
	ingestFormat     = "fiscal402.ingest/1"
)

// queuedIngest is a queue entry as stored: its public status and what is
// needed to ingest it, already parsed and validated.
type queuedIngest struct {
	Format      string       `json:"format"`
	Status      IngestStatus `json:"status"`
	Input       x402Input    `json:"input"`
	Buyer       BuyerFacts   `json:"buyer"`
	IdemKey     string       `json:"idempotencyKey,omitempty"`
	Fingerprint []byte       `json:"fingerprint"`
	DueAt       int64        `json:"dueAt,omitempty"` // unix nanos of its due key; 0 when not queued
}

// ingestQueue is the engine's in-process queue state; the queue itself is
// in the ledger.
type ingestQueue struct {
	mu   sync.Mutex    // one processing pass at a time
	wake chan struct{} // nudges RunIngestQueue after an enqueue
}

func newIngestQueue() *ingestQueue { return &ingestQueue{wake: make(chan struct{}, 1)} }

func (q *ingestQueue) nudge() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func idemIndexKey(accountID, key string) []byte { return []byte(accountID + "\x00" + key) }

// EnqueueX402 validates an x402 payment exactly as IngestX402 does, without
// asking the chain, and durably queues it (fsynced) for RunIngestQueue to
// record. It is what an x402 OnAfterSettle hook should call: it is quick,
// and a chain that is slow, down or not final yet cannot lose the payment.
//
// Answers: Outcome Queued with the entry's status (a new entry, or the
// entry already queued for this payment; a failed entry is queued again);
// Existing or Replayed with the record when the payment is recorded
// already; NOT_SETTLED for success:false without "settlement_pending";
// SETTLEMENT_CONFLICT when another account queued or recorded the payment,
// or this account queued it with other facts; IDEMPOTENCY_CONFLICT when the
// key belongs to another payment; and the validation errors of IngestX402.
func (e *Engine) EnqueueX402(ctx context.Context, accountID string, settleResponse, paymentRequirements, paymentPayload []byte, buyer BuyerFacts, idempotencyKey string) (*IngestResult, error) {
	acc, in, norm, pending, err := e.parseX402Ingest(accountID, settleResponse, paymentRequirements, paymentPayload, buyer, idempotencyKey)
	if err != nil {
		return nil, err
	}
	reason := ingestReasonAsync
	if pending {
		reason = ingestReasonSettlementPending
	}
	return e.enqueue(ctx, acc, in, norm, idempotencyKey, reason)
}

func (e *Engine) enqueue(ctx context.Context, acc *Account, in x402Input, buyer BuyerFacts, idemKey, reason string) (*IngestResult, error) {
	job := e.x402Job(acc, in, buyer, idemKey)
	res, err := e.answerFromLedger(acc.ID, job.claims())
	if err != nil {
		return nil, err
	}
	if res != nil {
		return ingestResult(res), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := e.clock().UTC()
	id := EventID(in.Network, in.TxHash)
	var status IngestStatus
	err = e.ledger.Update(func(tx ledger.Tx) error {
		if idemKey != "" {
			if held := tx.Get(bucketIngestKeys, idemIndexKey(acc.ID, idemKey)); held != nil && string(held) != id {
				return queuedKeyConflict()
			}
		}
		if raw := tx.Get(bucketIngest, []byte(id)); raw != nil {
			var q queuedIngest
			if err := json.Unmarshal(raw, &q); err != nil {
				return &Error{Code: CodeInternal, Detail: "a stored queue entry is unreadable", Err: err}
			}
			switch {
			case q.Status.Account != acc.ID:
				return &Error{Code: CodeSettlementConflict, Field: "/settleResponse/transaction", Detail: "this (network, txHash) settlement is already queued for another account"}
			case !bytes.Equal(q.Fingerprint, job.fingerprint) && idemKey != "" && q.IdemKey == idemKey:
				return &Error{Code: CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key was already used with a different request body"}
			case !bytes.Equal(q.Fingerprint, job.fingerprint):
				return &Error{Code: CodeSettlementConflict, Field: "/settleResponse/transaction", Detail: "this (network, txHash) settlement is already queued with other facts (amount, payer, payTo or buyer facts differ)"}
			case q.Status.State == IngestFailed:
				q.Status.State, q.Status.Attempts = IngestQueued, 0
				if err := q.schedule(tx, now, now); err != nil {
					return err
				}
			}
			if idemKey != "" {
				if err := tx.Put(bucketIngestKeys, idemIndexKey(acc.ID, idemKey), []byte(id)); err != nil {
					return err
				}
			}
			status = q.Status
			return nil
		}
		q := queuedIngest{
			Format: ingestFormat,
			Status: IngestStatus{
				ID: id, Object: "x402_ingest", Account: acc.ID, State: IngestQueued, Reason: reason,
				Network: in.Network, TxHash: in.TxHash, CreatedAt: now.Format(time.RFC3339Nano),
			},
			Input: in, Buyer: buyer, IdemKey: idemKey, Fingerprint: job.fingerprint,
		}
		if err := q.schedule(tx, now, now); err != nil {
			return err
		}
		if idemKey != "" {
			if err := tx.Put(bucketIngestKeys, idemIndexKey(acc.ID, idemKey), []byte(id)); err != nil {
				return err
			}
		}
		status = q.Status
		return nil
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, storeError(err)
	}
	e.ingest.nudge()
	return &IngestResult{Outcome: Queued, Queued: &status}, nil
}

func queuedKeyConflict() *Error {
	return &Error{Code: CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: "this Idempotency-Key is already used by another queued settlement"}
}

// checkQueuedKey refuses to record a payment under an Idempotency-Key that
// a queued entry of another payment holds: the key names one request.
func (e *Engine) checkQueuedKey(j *ingestJob) error {
	if j.idemKey == "" {
		return nil
	}
	held, err := e.ledger.Get(bucketIngestKeys, idemIndexKey(j.acc.ID, j.idemKey))
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	if err != nil {
		return storeError(err)
	}
	if string(held) != EventID(j.network, j.txHash) {
		return queuedKeyConflict()
	}
	return nil
}

// schedule (re)queues the entry for an attempt at due: it replaces the
// entry's due key and writes the entry.
func (q *queuedIngest) schedule(tx ledger.Tx, now, due time.Time) error {
	if q.DueAt != 0 {
		if err := tx.Delete(bucketIngestDue, timeKey(q.DueAt, []byte(q.Status.ID))); err != nil {
			return err
		}
	}
	q.DueAt = due.UnixNano()
	q.Status.NextAttemptAt = due.Format(time.RFC3339Nano)
	q.Status.UpdatedAt = now.Format(time.RFC3339Nano)
	if err := tx.Put(bucketIngestDue, timeKey(q.DueAt, []byte(q.Status.ID)), []byte(q.Status.ID)); err != nil {
		return err
	}
	return q.put(tx)
}

func (q *queuedIngest) put(tx ledger.Tx) error {
	raw, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return tx.Put(bucketIngest, []byte(q.Status.ID), raw)
}

// finished is the entry in a final state (recorded or failed), as stored,
// and the writes that put it there and remove its due key.
func (q queuedIngest) finished(state string, now time.Time, lastErr *IngestError) (queuedIngest, []ledger.Put) {
	f := q
	f.Status.State = state
	f.Status.Attempts++
	f.Status.UpdatedAt = now.Format(time.RFC3339Nano)
	f.Status.NextAttemptAt = ""
	f.Status.LastError = lastErr
	if state == IngestRecorded {
		f.Status.RecordURL = "/settlements/" + q.Status.ID
	}
	f.DueAt = 0
	raw, _ := json.Marshal(f) // plain strings, ints and bytes: cannot fail
	puts := []ledger.Put{{Bucket: bucketIngest, Key: []byte(q.Status.ID), Value: raw}}
	if q.DueAt != 0 {
		puts = append(puts, ledger.Put{Bucket: bucketIngestDue, Key: timeKey(q.DueAt, []byte(q.Status.ID))})
	}
	return f, puts
}

// ProcessIngestQueue makes one pass over the queue entries that are due by
// the engine clock, oldest first (at most 64): each is ingested as
// IngestX402 would (ledger first, then the chain, then one append that also
// marks the entry recorded). An attempt that meets a chain or store that
// cannot answer now (CHAIN_UNAVAILABLE, including a transaction not yet
// mined or not final; DB_UNAVAILABLE; an internal error), or a transaction
// no node knows within IngestNotFoundGrace, is retried later with
// exponential backoff (2 s doubling to 10 min, never before the chain's
// Retry-After). Any other answer (CHAIN_VERIFY_FAILED, a conflict) fails
// the entry; its status keeps the error. An engine restarted with the
// network's chain mode off keeps its entries queued (retried every 10
// minutes at most) rather than failing them. It returns how many entries it
// attempted; an error means the pass stopped early (ctx done, or the queue
// could not be read or written) and is safe to retry.
func (e *Engine) ProcessIngestQueue(ctx context.Context) (int, error) {
	e.ingest.mu.Lock()
	defer e.ingest.mu.Unlock()
	now := e.clock().UTC()
	type due struct {
		key []byte
		id  string
	}
	var dues []due
	err := e.ledger.View(func(tx ledger.Tx) error {
		limit := timeKey(now.UnixNano()+1, nil)
		return tx.Scan(bucketIngestDue, nil, nil, false, func(k, v []byte) bool {
			if bytes.Compare(k, limit) >= 0 || len(dues) == ingestPassLimit {
				return false
			}
			dues = append(dues, due{bytes.Clone(k), string(v)})
			return true
		})
	})
	if err != nil {
		return 0, storeError(err)
	}
	n := 0
	for _, d := range dues {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if err := e.attemptQueued(ctx, d.key, d.id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// attemptQueued makes one attempt at a queue entry and stores its outcome.
// Only a failure to read or write the queue (or ctx) is returned.
func (e *Engine) attemptQueued(ctx context.Context, key []byte, id string) error {
	q, err := e.loadQueued(id)
	if CodeOf(err) == CodeNotFound {
		return e.updateQueue(func(tx ledger.Tx) error { return tx.Delete(bucketIngestDue, key) })
	}
	if err != nil {
		return err
	}
	now := e.clock().UTC()
	if q.Status.State != IngestQueued || !bytes.Equal(key, timeKey(q.DueAt, []byte(id))) {
		// A due key the entry no longer owns (it cannot arise from this
		// code; removing it keeps the queue from spinning if it ever does).
		return e.updateQueue(func(tx ledger.Tx) error { return tx.Delete(bucketIngestDue, key) })
	}
	acc, ok := e.accounts.Get(q.Status.Account)
	if !ok {
		_, puts := q.finished(IngestFailed, now, &IngestError{Code: CodeAuthenticationFailed, Detail: "the account that queued this settlement no longer exists"})
		return e.applyPuts(puts)
	}
	job := e.x402Job(acc, q.Input, q.Buyer, q.IdemKey)
	_, job.puts = q.finished(IngestRecorded, now, nil)
	res, err := e.ingestNow(ctx, job)
	switch {
	case err == nil && res.Outcome == Created:
		return nil // the append wrote the recorded state
	case err == nil:
		return e.applyPuts(job.puts) // recorded meanwhile (another path, or a replay)
	case ctx.Err() != nil:
		return ctx.Err() // not an attempt: nothing was written
	}
	lastErr := ingestErrorOf(err)
	if delay, retry := retryDelay(err, q, now); retry {
		return e.updateQueue(func(tx ledger.Tx) error {
			q.Status.Attempts++
			q.Status.LastError = lastErr
			return q.schedule(tx, now, now.Add(max(delay, backoff(q.Status.Attempts))))
		})
	}
	e.log.Warn("x402 ingest failed", "id", id, "account", q.Status.Account, "code", lastErr.Code, "detail", lastErr.Detail)
	_, puts := q.finished(IngestFailed, now, lastErr)
	return e.applyPuts(puts)
}

// retryDelay says whether an attempt's error is worth retrying, and the
// earliest retry the error itself asks for.
func retryDelay(err error, q queuedIngest, now time.Time) (time.Duration, bool) {
	var fe *Error
	if !errors.As(err, &fe) {
		return 0, true // not an answer about the payment: never give up on it
	}
	switch fe.Code {
	case CodeChainUnavailable, CodeDBUnavailable, CodeInternal:
		return fe.RetryAfter, true
	case CodeChainVerifyRequired:
		return 0, true // the operator turned verification off since: wait for it to come back
	case CodeChainVerifyFailed:
		var rej *evmverify.RejectedError
		created, _ := time.Parse(time.RFC3339Nano, q.Status.CreatedAt)
		if errors.As(err, &rej) && rej.Reason == evmverify.ReasonTxNotFound && now.Sub(created) < IngestNotFoundGrace {
			return 0, true
		}
	}
	return 0, false
}

// backoff is the delay before attempt n+1 after n failed attempts.
func backoff(attempts int) time.Duration {
	d := ingestFirstRetry
	for i := 1; i < attempts && d < ingestMaxRetry; i++ {
		d *= 2
	}
	return min(d, ingestMaxRetry)
}

func ingestErrorOf(err error) *IngestError {
	var fe *Error
	if errors.As(err, &fe) {
		return &IngestError{Code: fe.Code, Field: fe.Field, Detail: fe.Detail}
	}
	return &IngestError{Code: CodeInternal, Detail: "internal error"}
}

func (e *Engine) loadQueued(id string) (queuedIngest, error) {
	var q queuedIngest
	raw, err := e.ledger.Get(bucketIngest, []byte(id))
	if err != nil {
		return q, storeErrorOr404(err, "x402 ingest "+id)
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		return q, &Error{Code: CodeInternal, Detail: "a stored queue entry is unreadable", Err: err}
	}
	if q.Format != ingestFormat {
		return q, &Error{Code: CodeInternal, Detail: "a stored queue entry has an unknown format", Err: fmt.Errorf("format %q", q.Format)}
	}
	return q, nil
}

func storeErrorOr404(err error, what string) error {
	if errors.Is(err, ledger.ErrNotFound) {
		return notFound(what)
	}
	return storeError(err)
}

func (e *Engine) applyPuts(puts []ledger.Put) error {
	return e.updateQueue(func(tx ledger.Tx) error {
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
	})
}

func (e *Engine) updateQueue(fn func(tx ledger.Tx) error) error {
	if err := e.ledger.Update(fn); err != nil {
		return storeError(err)
	}
	return nil
}

// RunIngestQueue processes the ingest queue until ctx is done: a pass
// whenever an entry is due (by the engine clock), when EnqueueX402 or
// IngestX402 queues one, and at least every 5 seconds. Run one per engine,
// in its own goroutine, and cancel ctx before Close; entries survive
// restarts, so stopping it loses nothing. Store errors are logged and the
// pass is retried a second later.
func (e *Engine) RunIngestQueue(ctx context.Context) {
	for ctx.Err() == nil {
		wait := ingestPoll
		if n, err := e.ProcessIngestQueue(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.Error("x402 ingest queue", "err", err)
			wait = time.Second
		} else if n == ingestPassLimit {
			wait = 0 // more may be due
		} else if next, ok := e.nextDue(); ok {
			wait = min(max(next.Sub(e.clock()), 0), ingestPoll)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-e.ingest.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// nextDue returns the time of the earliest due entry.
func (e *Engine) nextDue() (time.Time, bool) {
	var at time.Time
	found := false
	_ = e.ledger.View(func(tx ledger.Tx) error {
		return tx.Scan(bucketIngestDue, nil, nil, false, func(k, _ []byte) bool {
			if len(k) >= 8 {
				at, found = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))), true
			}
			return false
		})
	})
	return at, found
}

// IngestStatus returns the state of the account's queued x402 payment id
// (the id the record gets). A payment another account queued, or one that
// was never queued (recorded directly by IngestX402), is NOT_FOUND.
func (e *Engine) IngestStatus(ctx context.Context, accountID, id string) (*IngestStatus, error) {
	q, err := e.loadQueued(id)
	if err != nil {
		return nil, err
	}
	if q.Status.Account != accountID {
		return nil, notFound("x402 ingest " + id)
	}
	st := q.Status
	if st.State == IngestQueued {
		// Recorded meanwhile by IngestX402 or POST /settlements; the queue
		// entry learns it at its next attempt.
		if r, _, err := e.loadRecord(id); err == nil && r.Account == accountID {
			st.State, st.NextAttemptAt, st.RecordURL = IngestRecorded, "", "/settlements/"+id
		}
	}
	return &st, nil
}

package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// An entry is one ledger entry the engine writes: a state of a record (its
// first state, or a later revision) with its signed receipt as the log leaf,
// its invoice, and the outbox event that announces it. The ledger never
// rewrites an entry; a record's current state is its newest entry, found
// through the heads bucket.
type entry struct {
	id        string // ledger entry id = the event id of this entry
	record    Record // the record state; Ledger is filled in by seal
	claims    receipt.Claims
	ubl       []byte
	createdAt time.Time
	eventType string

	ledgerClaims []ledger.Claim
	postings     []ledger.Posting
	puts         []ledger.Put

	// seal, when set, replaces Engine.seal: it returns the stored document
	// and the log leaf for the entry's index (fiscal events, whose leaf is
	// not always a receipt).
	seal func(index int64) (doc []byte, leaf string, err error)
}

// Event types (stable names: spec §6 "event type names stay stable").
const (
	EventSettlementProcessed     = "settlement.processed"
	EventSettlementPendingReview = "settlement.pending_review"
	EventSettlementReviewResolve = "settlement.review_resolved"
	EventFiscalEventRecorded     = "fiscal_event.recorded"
)

// Ledger buckets and indexes the engine uses beside its entries.
const (
	bucketHeads         = "heads"          // record id → id of the entry holding its current state
	bucketEvents        = "events"         // 8-byte big-endian ledger index → Event JSON (the outbox)
	indexAccountEvents  = "account-events" // account \x00 8-byte index → entry id
	revisionIDSeparator = "-r"             // entry id of revision n ≥ 2: record id + "-r" + n
)

// Event is an outbox event: one per ledger entry, written in the same
// transaction as the entry, so there are no lost or phantom events. Its
// Sequence is the entry's ledger index, for ordering and gap detection.
type Event struct {
	ID       string `json:"id"`   // "evt_" + entry id; stable across deliveries
	Type     string `json:"type"` // one of the Event* constants
	Created  string `json:"created"`
	Sequence int64  `json:"sequence"`
	Account  string `json:"account"`
	RecordID string `json:"recordId"`
	EntryID  string `json:"entryId"`
}

func revisionEntryID(recordID string, revision int) string {
	if revision <= 1 {
		return recordID
	}
	return fmt.Sprintf("%s%s%d", recordID, revisionIDSeparator, revision)
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// timeKey orders side-bucket keys by time: 8-byte big-endian unix
// nanoseconds, then id (the due indexes of the ingest queue and of webhook
// deliveries).
func timeKey(unixNano int64, id []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(unixNano)), id...)
}

// write appends the entry in one ledger transaction: leaf (the signed
// receipt), record and invoice documents, claims, postings, the record's
// head pointer and the outbox event. It returns the record as stored and
// the ledger's answer.
func (e *Engine) write(ctx context.Context, en *entry) ([]byte, ledger.Appended, error) {
	var stored []byte
	res, err := e.ledger.Append(ctx, ledger.Append{
		Claims: en.ledgerClaims,
		Build: func(index int64) (ledger.Entry, error) {
			seal := e.seal
			if en.seal != nil {
				seal = func(_ *entry, index int64) ([]byte, string, error) { return en.seal(index) }
			}
			rec, jws, err := seal(en, index)
			if err != nil {
				return ledger.Entry{}, err
			}
			ev, err := json.Marshal(Event{
				ID:       "evt_" + en.id,
				Type:     en.eventType,
				Created:  en.createdAt.Format(time.RFC3339Nano),
				Sequence: index,
				Account:  en.record.Account,
				RecordID: en.record.ID,
				EntryID:  en.id,
			})
			if err != nil {
				return ledger.Entry{}, err
			}
			stored = rec
			docs := map[string][]byte{docRecord: rec}
			if en.ubl != nil {
				docs[docUBL] = en.ubl
			}
			postings := append([]ledger.Posting{{Index: indexAccountEvents, Key: accountIndexKey(en.record.Account, index)}}, en.postings...)
			puts := append([]ledger.Put{
				{Bucket: bucketHeads, Key: []byte(en.record.ID), Value: []byte(en.id)},
				{Bucket: bucketEvents, Key: be64(index), Value: ev},
			}, en.puts...)
			return ledger.Entry{ID: en.id, Leaf: []byte(jws), Docs: docs, Postings: postings, Puts: puts}, nil
		},
	})
	if err != nil {
		var conflict *ledger.ClaimConflictError
		var fe *Error
		switch {
		case errors.As(err, &conflict):
			return nil, res, claimConflict(conflict.Claim)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return nil, res, err
		case errors.As(err, &fe):
			return nil, res, fe
		}
		return nil, res, storeError(err)
	}
	e.webhooks.notify() // the outbox has a new event
	return stored, res, nil
}

// seal fixes the entry's log index in the record and the receipt, signs the
// receipt and encodes the record. It runs inside the ledger transaction and
// is deterministic for an index (Ed25519 signatures are deterministic), as
// the ledger requires.
func (e *Engine) seal(en *entry, index int64) (record []byte, jws string, err error) {
	rec := en.record
	rec.Ledger = LedgerRef{Origin: e.origin, Index: index}
	if n := len(rec.History); n > 0 {
		rec.History = append([]Revision(nil), rec.History...)
		rec.History[n-1].LedgerIndex = index
	}
	claims := en.claims
	claims.Log = receipt.LogRef{Origin: e.origin, Index: index}
	jws, err = e.keyring.Sign(claims)
	if err != nil {
		return nil, "", fmt.Errorf("fiscal: sign receipt: %w", err)
	}
	record, err = json.Marshal(rec)
	if err != nil {
		return nil, "", err
	}
	return record, jws, nil
}

func accountIndexKey(accountID string, index int64) []byte {
	k := append([]byte(accountID), 0)
	return binary.BigEndian.AppendUint64(k, uint64(index))
}

// currentEntryID returns the id of the entry holding the record's current
// state (its newest revision).
func (e *Engine) currentEntryID(recordID string) (string, error) {
	head, err := e.ledger.Get(bucketHeads, []byte(recordID))
	if errors.Is(err, ledger.ErrNotFound) {
		return "", notFound("settlement " + recordID)
	}
	if err != nil {
		return "", storeError(err)
	}
	return string(head), nil
}

// loadRecord returns the current state of a record as stored.
func (e *Engine) loadRecord(recordID string) (*Record, []byte, error) {
	entryID, err := e.currentEntryID(recordID)
	if err != nil {
		return nil, nil, err
	}
	raw, err := e.ledger.Doc(entryID, docRecord)
	if err != nil {
		return nil, nil, storeError(err)
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	return &r, raw, nil
}

// storedInvoice reads the UBL document stored with entry entryID of l and
// checks it against the SHA-256 its record states, so that a damaged file is
// an error, never a wrong invoice served as the bound one.
func storedInvoice(l *ledger.Ledger, entryID, wantSHA256 string) ([]byte, string, error) {
	raw, err := l.Doc(entryID, docUBL)
	if err != nil {
		return nil, "", storeError(err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != wantSHA256 {
		return nil, "", &Error{Code: CodeInternal, Detail: "stored invoice does not match its recorded hash", Err: fmt.Errorf("sha256 %s, record says %s", got, wantSHA256)}
	}
	return raw, wantSHA256, nil
}

package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/internal/anchor"
	"github.com/fiscal402/fiscal402/internal/jsontop"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// Event types (stable names: an event type is never renamed; payload fields
// may be added).
const (
	EventSettlementProcessed     = "settlement.processed"
	EventSettlementPendingReview = "settlement.pending_review"
	EventSettlementReviewResolve = "settlement.review_resolved"
)

// Ledger buckets and indexes the engine uses beside its entries.
const (
	bucketHeads         = "heads"          // record id → id of the entry holding its current state, from revision 2 on
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

// Commit appends the draft as one ledger entry, in one transaction: the
// leaf (the receipt's payload, or the document when the draft has no
// receipt), the stored document and invoice, claims, postings, side
// writes (a revision's head pointer among them) and the outbox event. It returns the
// document as stored and the ledger's answer: Existing when a claim was
// already held (nothing written; Books.Lookup tells a replay from a
// duplicate). A nil error means the entry is committed and fsynced.
//
// The entry is sealed here, in the caller's goroutine, at a predicted log
// index and invoice number (predict.go); the committer compares them with
// the true ones and the Art. 59c total with what it finds, and writes the
// outbox event. A wrong prediction is sealed again in the committer; one
// revoked before it was sent, here. A 4.0.0 receipt is admitted under the
// active receipt key first (receipt.Keyring.Hold), which then cosigns the
// checkpoint of the commit that appends it even if it is rotated
// meanwhile; sealing is checking and encoding its claims, no signature
// (receipt doc.go "# Version 4.0.0").
func (e *Engine) Commit(ctx context.Context, d *Draft) ([]byte, ledger.Appended, error) {
	if d.Record.ReviewStatus != StatusProcessed {
		// Only a processed state counts toward the Art. 59c total, once,
		// as a rebuild from the ledger counts: a state pending review (the
		// invoicing law's, Issue; a fiscal event's) is revised, and the
		// revision that processes the supply counts it. A review found a
		// pending state and its revision each adding the value.
		d.total = nil
	}
	postings := append([]ledger.Posting{{Index: indexAccountEvents, Key: []byte(d.Record.Account + "\x00"), AppendIndex: true}}, d.Postings...)
	if idx := timeIndex(d); idx != "" {
		postings = append(postings, ledger.Posting{Index: idx, Key: accountTimeKey(d.Record.Account, d.createdAt, d.Record.ID)})
	}
	puts := d.Puts // a first revision whose id reads as no revision's has no head (currentEntryID)
	if d.id != d.Record.ID || recordIDOf(d.id) != d.id {
		puts = append([]ledger.Put{{Bucket: bucketHeads, Key: []byte(d.Record.ID), Value: []byte(d.id)}}, d.Puts...)
	}
	checks := d.commitChecks()
	for _, c := range d.Claims {
		if c.Space == claimIdempotency {
			checks = append(checks[:len(checks):len(checks)], keyNotBound(c, d))
		}
	}
	series := ""
	if d.ublDraft != nil {
		series = d.series
	}
	hold, err := e.keyring.Hold(d.claims) // nil claims (no receipt): nothing held
	if err != nil {
		return nil, ledger.Appended{}, fmt.Errorf("fiscal: receipt: %w", err)
	}
	defer hold.Release() // once the append is answered: its checkpoint is signed
	rnd := &replay{src: e.rand}
	var g, sealed *ledger.Prediction
	var doc []byte
	var prep *ledger.Prepared
	for try := 0; ; try++ {
		// A prediction revoked before it was sent (Predictor.Pending) is made
		// again, once: the second one is final (never revoked), so there are
		// at most two tries and two deferred Dones (Done of a revoked one is
		// a no-op). The entry is sealed again, with the same random bytes,
		// only if the new prediction differs.
		var err error
		if g, err = e.predict.Predict(e.ledger.Size(), series, try > 0, func() (int64, error) { return e.ledger.Sequence(series) }); err != nil {
			return nil, ledger.Appended{}, storeError(err)
		}
		defer g.Done()
		if sealed == nil || g.Index != sealed.Index || g.Number != sealed.Number {
			rnd.playing, rnd.pos = sealed != nil, 0
			if d.ublDraft != nil {
				if err := e.numberAs(d, g.Number); err != nil {
					return nil, ledger.Appended{}, err
				}
			}
			var leaf, openings []byte
			if doc, leaf, openings, err = e.seal(d, g.Index, rnd, e.sealBuffers(d)); err != nil {
				return nil, ledger.Appended{}, err
			}
			docs := map[string][]byte{docRecord: doc}
			if d.ubl != nil {
				docs[docUBL] = d.ubl
			}
			if openings != nil {
				docs[docOpenings] = openings
			}
			if prep, err = e.ledger.Prepare(ledger.Entry{ID: d.id, Leaf: leaf, Docs: docs, Postings: postings, Puts: puts}); err != nil {
				return nil, ledger.Appended{}, storeError(err)
			}
		}
		if sealed = g; g.Send() {
			break
		}
	}
	ev := d.event(g.Index) // the outbox event, at the predicted index too
	stored := doc
	a := ledger.Append{
		Claims:   d.Claims,
		Prepared: prep,
		// A batch plans the appends in the order of their predictions.
		Order:   g.Index + 1,
		Pending: e.predict.Pending,
		Hook: func(h *ledger.Hook) error {
			for _, c := range checks {
				if err := c.fn(h); err != nil {
					return err
				}
			}
			index, number := h.Index(), int64(0)
			if d.ublDraft != nil {
				var err error
				if number, err = h.Sequence(d.series); err != nil {
					return err
				}
			}
			stored = doc
			if !g.Drew(index, number) {
				// The prediction went stale: seal again at the true
				// position, with the same random bytes.
				if err := e.resealIn(h, d, index, number, rnd, &stored); err != nil {
					return err
				}
				ev = d.event(index)
			}
			if err := d.total.apply(h, d); err != nil {
				return err
			}
			return h.Put(bucketEvents, be64(index), ev)
		},
	}
	if d.series != "" {
		a.Sequences = []string{d.series}
	}
	if d.total != nil {
		a.Reads = d.total.reads()
	}
	for _, c := range checks {
		a.Reads = append(a.Reads, c.reads...)
	}
	res, err := e.ledger.Append(ctx, a)
	if err != nil {
		var conflict *ledger.ClaimConflictError
		switch {
		case errors.As(err, &conflict):
			return nil, res, claimConflict(conflict.Claim)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return nil, res, err
		case errors.Is(err, errStaleTotal): // a concurrent sale of the account counted first: decide again
			e.totals.forget(d.total)
			return nil, res, &Error{Code: CodeDBUnavailable, Detail: "the account's running totals changed while this sale was decided; retry", RetryAfter: time.Second, Err: errStaleTotal}
		}
		return nil, res, storeError(err) // a hook's *Error as it is
	}
	if res.Existing {
		return nil, res, nil
	}
	e.totals.committed(d.total)
	e.outbox.notify()
	if d.total != nil && d.total.crossed {
		// The crossing is committed whether or not its caller still
		// waits: its event must not end with the caller's context (an
		// HTTP client gone after the commit), or it stays queued in
		// threshold-due until the next start or crossing.
		e.emitThresholdEvents(context.WithoutCancel(ctx))
	}
	return stored, res, nil
}

// event is the outbox event of the draft's entry at a log index (its
// fields, strings and an integer, always encode).
func (d *Draft) event(index int64) []byte {
	ev, _ := appendEventJSON(make([]byte, 0, 320), &Event{ID: "evt_" + d.id, Type: d.EventType, Created: d.createdAt.Format(time.RFC3339Nano),
		Sequence: index, Account: d.Record.Account, RecordID: d.Record.ID, EntryID: d.id})
	return ev
}

// resealIn seals the draft again in the committer, at the index and with
// the invoice number the committer gave, and replaces the prebuilt
// documents and leaf (the recompute path).
func (e *Engine) resealIn(h *ledger.Hook, d *Draft, index, number int64, rnd *replay, stored *[]byte) error {
	if d.ublDraft != nil {
		if err := e.numberAs(d, number); err != nil {
			return err
		}
		if err := h.SetDoc(docUBL, d.ubl); err != nil {
			return err
		}
	}
	rnd.playing, rnd.pos = true, 0
	doc, leaf, openings, err := e.seal(d, index, rnd, nil) // new buffers: the prepared entry still holds the draft's
	if err != nil {
		return err
	}
	if err := h.SetDoc(docRecord, doc); err != nil {
		return err
	}
	if openings != nil {
		if err := h.SetDoc(docOpenings, openings); err != nil {
			return err
		}
	}
	*stored = doc
	return h.SetLeaf(leaf)
}

// sealedAt is the record a committed draft stored, without reading it
// back: the draft's record at its log index. A value, which seal encodes
// from its stack (a Record is 1.4 KB: one heap copy fewer per settlement).
func (e *Engine) sealedAt(d *Draft, index int64) Record {
	r := d.Record
	e.placeAt(&r, index)
	return r
}

// placeAt gives r its log index: in its ledger reference and in its last
// revision, whose History is copied first (the draft's may be sealed
// again, and a way in's edit may share it).
func (e *Engine) placeAt(r *Record, index int64) {
	r.Ledger = LedgerRef{Origin: e.cfg.LogOrigin, Index: index}
	if n := len(r.History); n > 0 {
		r.History = append([]Revision(nil), r.History...)
		r.History[n-1].LedgerIndex = index
	}
}

// sealBufs are the buffers a draft's receipt leaf and openings are
// written into (seal), from the engine's pool: both are garbage once the
// entry's Append returned (the ledger encoded them into the entry's blob
// and keeps no reference to an answered append), when Engine.release
// gives them back. Together ~3 KB a settlement did not allocate (at Go's
// default GOGC each allocated byte brings the next collection closer).
type sealBufs struct{ leaf, openings []byte }

// sealBuffers returns the draft's buffers, taking them on its first seal
// from those committed drafts gave back, or new ones; nil for a draft
// without a receipt.
func (e *Engine) sealBuffers(d *Draft) *sealBufs {
	if d.bufs == nil && d.claims != nil {
		if b, _ := e.sealBufs.Get().(*sealBufs); b != nil {
			d.bufs = b
		} else {
			d.bufs = &sealBufs{leaf: make([]byte, 0, 3<<10), openings: make([]byte, 0, 2<<10)}
		}
	}
	return d.bufs
}

// maxPooledSealBuf bounds the buffers kept: an odd receipt (many evidence
// items) does not keep its large ones alive in the pool.
const maxPooledSealBuf = 16 << 10

// release gives back what the draft's documents were written into (its
// invoice's buffer to the renderer, ubl.Draft.Release; its leaf's and
// openings' buffers to the engine) once its Append returned. The draft
// has neither invoice nor receipt bytes after.
func (e *Engine) release(d *Draft) {
	if d.ublDraft != nil {
		d.ublDraft.Release()
		d.ublDraft, d.ubl = nil, nil
	}
	if b := d.bufs; b != nil {
		d.bufs = nil
		if cap(b.leaf) <= maxPooledSealBuf && cap(b.openings) <= maxPooledSealBuf {
			e.sealBufs.Put(b)
		}
	}
}

// seal fixes the entry's log index in the record and the receipt, seals the
// receipt (4.0.0, the version every new receipt has: commits its personal
// fields, checks and encodes its claims, the leaf; no signature) and
// encodes the document; rnd gives the commitments' salts. It is
// deterministic for an index, a number and rnd's bytes. Leaf and openings
// are written into bufs (overwriting what an earlier seal wrote there),
// or into new slices when bufs is nil.
func (e *Engine) seal(d *Draft, index int64, rnd io.Reader, bufs *sealBufs) (doc, leaf, openings []byte, err error) {
	if rec := e.sealedAt(d, index); d.Document != nil {
		doc, err = d.Document(new(rec)) // a heap copy for the function value; rec stays on the stack
	} else {
		// json.Marshal's bytes (json_gen.go), in a buffer of the last
		// record's size and 512 bytes (a longer name, more reasons): one
		// allocation for most records, of the size class they need (a
		// fixed 5 KB was 2 KB more than a typical record's).
		doc, err = appendRecordJSON(make([]byte, 0, e.recordSize.Load()+512), &rec)
		e.recordSize.Store(int64(len(doc)))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if d.claims == nil {
		// No receipt: the document is the leaf. It can never read as a
		// 4.0.0 receipt (it begins with another member), which the
		// receipt key vouches for in every tree it cosigns.
		if receipt.IsLeafV4(doc) {
			return nil, nil, nil, errors.New("fiscal: a document leaf reads as a 4.0.0 receipt payload")
		}
		return doc, doc, nil, nil
	}
	claims := *d.claims
	claims.Log = receipt.LogRef{Origin: e.cfg.LogOrigin, Index: index}
	// The stored record is committed to (record_sha256), and every
	// personal field becomes a salted commitment; the openings are kept
	// with the record, behind the account's key.
	sum := sha256.Sum256(doc)
	claims.RecordSHA256 = hex.EncodeToString(sum[:])
	// Admitted by Commit's Hold; ConcealSeal checks the claims once, as
	// Sign does, and refuses any version but 4.0.0, which has no JWS.
	if bufs == nil {
		bufs = &sealBufs{}
	}
	leaf, opened, err := receipt.ConcealSealAppend(bufs.leaf[:0], claims, rnd) // rnd holds the rand mutex only while it reads
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fiscal: conceal and seal receipt claims: %w", err)
	}
	bufs.leaf = leaf[:0] // grown, if it had to
	// A tx hash's opening is 139 bytes.
	openings, err = appendOpeningsJSON(slices.Grow(bufs.openings[:0], 160*len(opened)), &opened)
	bufs.openings = openings[:0]
	return doc, leaf, openings, err
}

// currentEntryID returns the id of the entry holding the record's current
// state (its newest revision): the head a revision wrote, or without one
// the entry whose id is the record id (a first revision writes no head
// unless its id could be read as a revision's, recordIDOf; files written
// before have one for every record).
func (e *Engine) currentEntryID(recordID string) (string, error) {
	head, err := e.ledger.Get(bucketHeads, []byte(recordID))
	if errors.Is(err, ledger.ErrNotFound) && recordIDOf(recordID) == recordID {
		head = []byte(recordID)
		_, err = e.ledger.IndexOf(recordID)
	}
	if err != nil {
		return "", notFoundOr(err, "settlement "+bare(recordID))
	}
	return string(head), nil
}

// Document returns the stored document of the current state of the record
// id, whatever its account or kind (a settlement record, a fiscal event),
// verified against the log and naming itself id (integrity.go).
func (e *Engine) Document(id string) ([]byte, error) {
	raw, _, err := e.document(id)
	return raw, err
}

// docHead is what every stored document says of itself, and the entry it
// is read from.
type docHead struct{ ID, Object, Account, entry string }

// document is Document, with what the document says of itself.
func (e *Engine) document(id string) (raw []byte, head docHead, err error) {
	entryID, err := e.currentEntryID(id)
	if err == nil {
		raw, head, err = e.entryDoc(entryID)
	}
	if err == nil && head.ID != id {
		return nil, head, e.misfiled(id, "the entry found for the id holds "+head.ID)
	}
	return raw, head, err
}

// entryDoc is the verified document of entry entryID, with its head.
func (e *Engine) entryDoc(entryID string) (raw []byte, head docHead, err error) {
	if raw, err = e.verifiedDoc(entryID, docRecord); err != nil {
		return nil, head, storeError(err)
	}
	v, _ := jsontop.Strings(raw, "id", "object", "account") // all "" if raw is not an object
	return raw, docHead{v[0], v[1], v[2], entryID}, nil
}

// EventDocument returns the document stored in the entry of one of the
// account's events (the record or fiscal event as of that entry: the
// body of its webhook), verified as Document is, and naming the event's
// record and account: the outbox is not covered by the log either.
func (b *Books) EventDocument(ev Event) ([]byte, error) {
	raw, head, err := b.e.entryDoc(ev.EntryID)
	if err == nil && (head.ID != ev.RecordID || head.Account != b.acc.ID || ev.Account != b.acc.ID) {
		return nil, b.e.misfiled(ev.ID, fmt.Sprintf("event of account %s for %s, in books %s, holds %s of account %s", ev.Account, ev.RecordID, b.acc.ID, head.ID, head.Account))
	}
	return raw, err
}

// Indexed returns the stored document id that one of the account's indexes
// lists under kind object (a settlement, a fiscal event, a refund):
// Document's checks, and it must be the account's and of that kind. An
// index, like the way from a name to its entry, is not covered by the log;
// a damaged one must not list another account's or kind's genuine
// document: LEDGER_INTEGRITY, logged.
func (b *Books) Indexed(id, object string) ([]byte, error) {
	raw, head, err := b.e.document(id)
	if err == nil && (head.Account != b.acc.ID || head.Object != object) {
		return nil, b.e.misfiled(id, fmt.Sprintf("the %s index of account %s lists a %s of account %s", object, b.acc.ID, head.Object, head.Account))
	}
	return raw, err
}

// decodeRecord decodes a record as stored, read by document (its current
// state) or entryDoc (the state one of its entries stored).
func decodeRecord(raw []byte, _ docHead, err error) (*Record, []byte, error) {
	if err != nil {
		return nil, nil, err
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	return &r, raw, nil
}

// StoredInvoice reads the UBL document stored with the current state of the
// record id and checks it against the SHA-256 its record states, so that a
// damaged file is an error, never a wrong invoice served as the bound one.
func (e *Engine) StoredInvoice(id, wantSHA256 string) ([]byte, string, error) {
	entryID, err := e.currentEntryID(id)
	if err != nil {
		return nil, "", err
	}
	raw, err := e.verifiedDoc(entryID, docUBL)
	if err != nil {
		return nil, "", storeError(err) // an integrity *Error as it is
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != wantSHA256 {
		return nil, "", &Error{Code: CodeInternal, Detail: "stored invoice does not match its recorded hash", Err: fmt.Errorf("sha256 %s, record says %s", got, wantSHA256)}
	}
	return raw, wantSHA256, nil
}

// Ledger index names of the engine: an account's records of each kind by
// the time they were recorded (TimeIndexSettlement, TimeIndexFiscalEvent).
const (
	indexAccountTime         = "account-time"          // account \x00 createdAt (8-byte big-endian unix nanos) record id → record id
	indexAccountFiscalEvents = "account-fiscal-events" // the same, for fiscal events
)

// timeIndex is the time index a new record's first entry is posted to;
// revisions are not posted again.
func timeIndex(d *Draft) string {
	if d.id != d.Record.ID {
		return ""
	}
	switch d.Record.Object {
	case ObjectSettlement:
		return indexAccountTime
	case ObjectFiscalEvent:
		return indexAccountFiscalEvents
	}
	return ""
}

// accountTimeKey is the key of a record in an account's time index:
// account \x00 createdAt (8-byte big-endian unix nanoseconds) id.
func accountTimeKey(accountID string, t time.Time, id string) []byte {
	k := make([]byte, 0, len(accountID)+1+8+len(id))
	k = binary.BigEndian.AppendUint64(append(append(k, accountID...), 0), uint64(t.UnixNano()))
	return append(k, id...)
}

// notFoundOr is the answer to a lookup of what that failed with err:
// NOT_FOUND for the ledger's ErrNotFound or the engine's NOT_FOUND, the
// store's error otherwise (a stopped or unwritable ledger is not a
// missing record).
func notFoundOr(err error, what string) *Error {
	if fe := (*Error)(nil); errors.Is(err, ledger.ErrNotFound) || errors.As(err, &fe) && fe.Code == CodeNotFound {
		return notFound(what)
	}
	return storeError(err)
}

func storeError(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe // already the engine's
	}
	if h := (*ledger.HaltedError)(nil); errors.As(err, &h) {
		// Until an operator has acted (ledger doc.go, "Durability"): the
		// error, logged with every 5xx answer, says what to do.
		return &Error{Code: CodeDBUnavailable, Detail: "the ledger stopped after a failed disk sync; it serves again once an operator has checked it", RetryAfter: time.Minute, Err: err}
	}
	if errors.Is(err, ledger.ErrUnavailable) || errors.Is(err, ledger.ErrClosed) {
		return &Error{Code: CodeDBUnavailable, Detail: "the ledger is unavailable right now; retry (nothing was written)", RetryAfter: time.Second, Err: err}
	}
	if errors.Is(err, ledger.ErrCorrupt) || errors.Is(err, ledger.ErrIntegrity) {
		// A damaged file met on any path (a list, a scan), not only on the
		// verified reads: the same answer as theirs.
		return &Error{Code: CodeLedgerIntegrity, Detail: "the ledger file is damaged; restore it from a backup", Err: err}
	}
	return &Error{Code: CodeInternal, Detail: "ledger error", Err: err}
}

// StoreError maps a ledger error to the engine's: DB_UNAVAILABLE (503, retry)
// for a closed or unwritable store, LEDGER_INTEGRITY for a damaged one, an
// engine *Error as it is, INTERNAL otherwise. Accessories keeping
// side data in the ledger answer with it.
func StoreError(err error) *Error { return storeError(err) }

// DocOpenings names the document stored with an entry whose receipt is
// 3.0.0: the openings of its committed fields, private (behind the
// account's key: Books.Openings).
const DocOpenings = anchor.DocOpenings

// Names of the documents stored with each ledger entry.
const (
	docRecord   = anchor.DocRecord
	docUBL      = anchor.DocUBL
	docOpenings = DocOpenings
)

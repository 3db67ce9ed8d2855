package refunds

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/ledger"
)

// listBatch is how many index entries ByDate reads at a time.
const listBatch = 256

// List returns the refunds of one of the account's settlements, oldest
// first (an empty slice when there are none).
func List(ctx context.Context, b *fiscal.Books, settlementID string) ([]Refund, error) {
	if _, _, err := b.Record(ctx, settlementID); err != nil {
		return nil, err
	}
	st, err := stateOf(b.Engine(), settlementID)
	if err != nil {
		return nil, err
	}
	out := make([]Refund, 0, st.Count)
	for n := 1; n <= st.Count; n++ {
		r, _, err := load(b.Engine(), refundID(settlementID, n))
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// ByDate calls fn with each of the account's refunds whose RefundDate is
// within [from, to] (YYYY-MM-DD, inclusive; "" leaves that side open),
// ordered by RefundDate then recording time, with the document as stored
// (read as Books.Indexed reads it: verified, the account's, a refund).
// It reads the index in batches and never holds more than one batch: a
// quarter of any size streams. An error of fn stops the scan and is
// returned. A bound not in the form YYYY-MM-DD is BAD_REQUEST (field
// "from" or "to").
func ByDate(ctx context.Context, b *fiscal.Books, from, to string, fn func(r *Refund, raw []byte) error) error {
	return byDate(ctx, b, from, to, nil, fn)
}

// ByRecording calls fn with each of the account's refunds recorded
// (CreatedAt) within [from, to] (inclusive; a zero time leaves that side
// open), in ByDate's order. A refund is dated by the block of its
// transfer, which may lie any time before the refund was recorded (a
// transfer of March recorded in May): so every day up to to's is read,
// by the index keys, which hold the recording time, and only the
// documents of the refunds recorded in the range are read.
func ByRecording(ctx context.Context, b *fiscal.Books, from, to time.Time, fn func(r *Refund, raw []byte) error) error {
	last := ""
	if !to.IsZero() {
		// A refund's local day is at most a day after its UTC day (EU
		// clocks run up to UTC+3), and its block is not after its
		// recording.
		last = to.Add(24 * time.Hour).UTC().Format(time.DateOnly)
	}
	recorded := func(key []byte) bool {
		at, ok := keyTime(b.Account().ID, key)
		return !ok || (from.IsZero() || !at.Before(from)) && (to.IsZero() || !at.After(to))
	}
	return byDate(ctx, b, "", last, recorded, fn)
}

// keyTime is the recording time an index key (indexKey) holds.
func keyTime(accountID string, key []byte) (time.Time, bool) {
	at := len(accountID) + 1 + len(time.DateOnly) + 1
	if len(key) < at+8 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(key[at:at+8]))).UTC(), true
}

// byDate is ByDate, reading only the refunds whose index keys keep
// accepts (nil: all).
func byDate(ctx context.Context, b *fiscal.Books, from, to string, keep func(key []byte) bool, fn func(r *Refund, raw []byte) error) error {
	// The bounds are compared with the index keys as text: only the
	// canonical form of a day selects what it names.
	for _, d := range []struct{ field, day string }{{"from", from}, {"to", to}} {
		if t, err := time.Parse(time.DateOnly, d.day); d.day != "" && (err != nil || t.Format(time.DateOnly) != d.day) {
			return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: d.field, Detail: fmt.Sprintf("%s is not a day in the form YYYY-MM-DD", shown.Quote(d.day))}
		}
	}
	e := b.Engine()
	prefix := []byte(b.Account().ID + "\x00")
	var after []byte
	if from != "" {
		after = append(append([]byte(nil), prefix...), from...) // every key of from sorts after it
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hits, err := e.Ledger().Scan(indexAccountRefunds, prefix, after, false, listBatch)
		if err != nil {
			return fiscal.StoreError(err)
		}
		for _, h := range hits {
			day := string(h.Key[len(prefix):min(len(h.Key), len(prefix)+10)])
			if to != "" && day > to {
				return nil
			}
			if keep != nil && !keep(h.Key) {
				continue
			}
			raw, err := b.Indexed(h.ID, ObjectRefund)
			if err != nil {
				return err
			}
			r, err := decode(raw)
			if err != nil {
				return err
			}
			if err := fn(r, raw); err != nil {
				return err
			}
		}
		if len(hits) < listBatch {
			return nil
		}
		after = hits[len(hits)-1].Key
	}
}

// stateOf reads a settlement's refund state (zero when it has none).
func stateOf(e *fiscal.Engine, settlementID string) (state, error) {
	raw, err := e.Ledger().Get(bucketState, []byte(settlementID))
	if errors.Is(err, ledger.ErrNotFound) {
		return state{}, nil
	}
	if err != nil {
		return state{}, fiscal.StoreError(err)
	}
	return decodeState(raw)
}

// statesOf is stateOf of each of settlementIDs, read in one transaction.
func statesOf(e *fiscal.Engine, settlementIDs []string) ([]state, error) {
	raws := make([][]byte, len(settlementIDs))
	err := e.Ledger().View(func(tx ledger.Tx) error {
		for i, id := range settlementIDs {
			raws[i] = tx.Get(bucketState, []byte(id))
		}
		return nil
	})
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	out := make([]state, len(raws))
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		if out[i], err = decodeState(raw); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodeState(raw []byte) (state, error) {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored refund state is unreadable", Err: err}
	}
	return st, nil
}

// load reads a refund document, checked against its receipt.
func load(e *fiscal.Engine, id string) (*Refund, []byte, error) {
	raw, err := e.Document(id)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
		return nil, nil, notFound("refund " + shown.Bare(id))
	}
	if err != nil {
		return nil, nil, err
	}
	r, err := decode(raw)
	return r, raw, err
}

// decode parses a stored refund document.
func decode(raw []byte) (*Refund, error) {
	var r Refund
	if err := json.Unmarshal(raw, &r); err != nil || r.Object != ObjectRefund {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored refund is unreadable", Err: err}
	}
	return &r, nil
}

// CreditNote returns the UBL credit note of one of the settlement's
// refunds and its SHA-256 (hex), exactly as stored, checked against the
// hash the refund's receipt commits to.
func CreditNote(ctx context.Context, b *fiscal.Books, settlementID, refundID string) ([]byte, string, error) {
	r, _, err := of(b, settlementID, refundID)
	if err != nil {
		return nil, "", err
	}
	if r.CreditNote == nil {
		return nil, "", &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "refund " + shown.Bare(refundID) + " has no credit note: the settlement's supply has no invoice, none being required, so there is none to amend"}
	}
	raw, sum, err := b.Engine().StoredInvoice(refundID, r.CreditNote.UBLSHA256)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeInternal && strings.HasPrefix(fe.Detail, "stored invoice does not match") {
		return nil, "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored credit note does not match its recorded hash", Err: fe.Err}
	}
	return raw, sum, err
}

// Document returns one of the settlement's refunds exactly as stored
// (GET /settlements/{id}/refunds/{rid}).
func Document(ctx context.Context, b *fiscal.Books, settlementID, refundID string) ([]byte, error) {
	_, raw, err := of(b, settlementID, refundID)
	return raw, err
}

// of reads a refund of one of the account's settlements; another
// account's, or another settlement's, is not found.
func of(b *fiscal.Books, settlementID, refundID string) (*Refund, []byte, error) {
	if !strings.HasPrefix(refundID, settlementID+idSeparator) {
		return nil, nil, notFound("refund " + shown.Bare(refundID) + " of settlement " + shown.Bare(settlementID))
	}
	r, raw, err := load(b.Engine(), refundID)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound || err == nil && (r.Account != b.Account().ID || r.SettlementID != settlementID) {
		return nil, nil, notFound("refund " + shown.Bare(refundID) + " of settlement " + shown.Bare(settlementID))
	}
	if err != nil {
		return nil, nil, err
	}
	return r, raw, nil
}

// RecordView returns the record id and its bytes as GET /settlements/{id}
// serves them: invoicing.RecordView's, with a member "refunds"
// (fiscal.RecordRefunds) appended when the settlement has refunds, and
// the same in the returned Record's Refunds. A record without refunds is
// served as invoicing.RecordView serves it.
func RecordView(ctx context.Context, b *fiscal.Books, id string) (*fiscal.Record, []byte, error) {
	r, raw, err := invoicing.RecordView(ctx, b, id)
	if err != nil {
		return nil, nil, err
	}
	st, err := stateOf(b.Engine(), r.ID)
	if err != nil || st.Count == 0 {
		return r, raw, err
	}
	view := fiscal.RecordRefunds{
		RefundedUSDC:  decimalOr0(st.RefundedUSDC).StringFixed(usdcDecimals),
		RemainingUSDC: remainingUSDC(r, st).StringFixed(usdcDecimals),
	}
	for n := 1; n <= st.Count; n++ {
		_, doc, err := load(b.Engine(), refundID(r.ID, n))
		if err != nil {
			return nil, nil, err
		}
		view.Items = append(view.Items, doc)
	}
	add, err := json.Marshal(view)
	if err != nil {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
	}
	if len(raw) < 2 || raw[len(raw)-1] != '}' {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable"}
	}
	out := make([]byte, 0, len(raw)+len(add)+12)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, `,"refunds":`...)
	out = append(out, add...)
	r.Refunds = &view
	return r, append(out, '}'), nil
}

package listing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// Listing limits (our own choice for GET /settlements; README "Listing records").
const (
	defaultListLimit = 50
	maxListLimit     = 200
	// maxListScan bounds the postings one page may examine, so that a
	// selective filter over a long history costs bounded work per request: a
	// page that hits the bound may hold fewer than limit items, and has_more
	// with next_cursor say where to go on.
	maxListScan = 2000
)

// Query selects a page of an account's records, newest first.
//
// The order is the time the service recorded each record (createdAt),
// newest first, ties broken by id: the order of the ledger's account-time
// index. A walk that follows next_cursor from the first page lists every
// record committed before that page was read, each once (the index only
// grows, and the cursor is a position in it). A record committed during the
// walk sorts where its createdAt puts it, nearly always before the first
// page; but createdAt is read when the record is decided, shortly before
// its commit (after the chain was asked), so the records of concurrent
// requests can commit out of createdAt order, and one committed during the
// walk may sort behind the cursor: it is in the next walk, not this one
// (and a record's later revisions keep its place). To follow every new
// record and revision in the order they were committed, read the account's
// events (GET /v1/events, webhooks: sequence is the log index, which never
// goes back). From and To bound createdAt;
// SettledFrom and SettledTo bound the settlement timestamp (the chargeable
// event, Art. 63 VAT Directive, which an OSS return is organised by). Every
// bound is inclusive; a date means the whole UTC day.
type Query struct {
	Limit        int       // 1..maxListLimit; 0 means defaultListLimit
	Cursor       string    // next_cursor of the previous page; "" for the first page
	From, To     time.Time // createdAt bounds; zero means unbounded
	SettledFrom  time.Time // settlement timestamp bounds; zero means unbounded
	SettledTo    time.Time
	ReviewStatus string // settlements only: PROCESSED or PENDING_MANUAL_REVIEW
	// Status is, for fiscal events, DETERMINED or MANUAL_REVIEW_REQUIRED;
	// for settlements the same as ReviewStatus.
	Status        string
	TaxingCountry string // ISO 3166-1 alpha-2 in capitals (GR for Greece; EL is accepted); else BAD_REQUEST
	// Object is the kind of record listed: fiscal.ObjectSettlement ("",
	// the default) or fiscal.ObjectFiscalEvent.
	Object string
}

func (q *Query) check(object string) error {
	if q.Limit == 0 {
		q.Limit = defaultListLimit
	}
	if q.Limit < 1 || q.Limit > maxListLimit {
		return badRequest("limit", "must be from 1 to %d", maxListLimit)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return badRequest("to", "is before from")
	}
	if !q.SettledFrom.IsZero() && !q.SettledTo.IsZero() && q.SettledTo.Before(q.SettledFrom) {
		return badRequest("settledTo", "is before settledFrom")
	}
	// Compared with the records' codes as text: anything else matches none.
	if c := q.TaxingCountry; c != "" && c != "EL" && c != "XI" && !vat.IsISOCountry(c) {
		return badRequest("taxingCountry", "is %s; want an ISO 3166-1 alpha-2 code in capitals, e.g. DE (EL is read as GR)", shown.Quote(c))
	}
	switch object {
	case fiscal.ObjectFiscalEvent:
		if q.ReviewStatus != "" {
			return badRequest("reviewStatus", "does not apply to fiscal events; filter by status (%s or %s)", vat.StatusDetermined, vat.StatusManualReview)
		}
		if q.Status != "" && q.Status != vat.StatusDetermined && q.Status != vat.StatusManualReview {
			return badRequest("status", "must be %s or %s", vat.StatusDetermined, vat.StatusManualReview)
		}
	default:
		// On settlements, status is the review status: the review queue
		// is GET /settlements?status=PENDING_MANUAL_REVIEW.
		if q.Status != "" {
			if q.Status != fiscal.StatusProcessed && q.Status != fiscal.StatusPendingReview {
				return badRequest("status", "must be %s or %s", fiscal.StatusProcessed, fiscal.StatusPendingReview)
			}
			if q.ReviewStatus != "" && q.ReviewStatus != q.Status {
				return badRequest("status", "contradicts reviewStatus %s", q.ReviewStatus)
			}
			q.ReviewStatus, q.Status = q.Status, ""
		}
		if q.ReviewStatus != "" && q.ReviewStatus != fiscal.StatusProcessed && q.ReviewStatus != fiscal.StatusPendingReview {
			return badRequest("reviewStatus", "must be %s or %s", fiscal.StatusProcessed, fiscal.StatusPendingReview)
		}
	}
	return nil
}

// Page is one page of a list, newest first. Its JSON is the body of GET
// /settlements and GET /v1/fiscal-events:
//
//	{"object":"list","data":[...],"has_more":true,"next_cursor":"..."}
//
// data holds each record exactly as GET /settlements/{id} (or
// /v1/fiscal-events/{id}) serves it, in its current revision. next_cursor is
// present exactly when has_more is true; it is opaque.
type Page struct {
	Object     string            `json:"object"` // "list"
	Data       []json.RawMessage `json:"data"`
	HasMore    bool              `json:"has_more"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// List returns a page of the account's records of one kind: settlement
// records, or fiscal events when q.Object is fiscal.ObjectFiscalEvent.
func List(ctx context.Context, b *fiscal.Books, q Query) (*Page, error) {
	return list(ctx, b, q, maxListScan)
}

// cursorVersion opens every cursor, so that a later encoding can be told
// apart (and an old cursor refused with a clear error). Version 1 had no
// tag: any position of the right shape was taken, in any account's list of
// any kind.
const cursorVersion = 2

// cursorTagLen is the length of a cursor's tag: the start of the SHA-256 of
// the list it belongs to (kind of record, account) and its position, so
// that a cursor of another list, or one made up or mistyped, is refused
// instead of answered with a page from wherever it points.
const cursorTagLen = 8

// list pages through the account's time index (scan) newest first,
// examining at most budget postings.
func list(ctx context.Context, b *fiscal.Books, q Query, budget int) (*Page, error) {
	object := q.Object
	switch object {
	case "":
		object = fiscal.ObjectSettlement
	case fiscal.ObjectSettlement, fiscal.ObjectFiscalEvent:
	default:
		return nil, badRequest("object", "is %s; want %q or %q", shown.Quote(q.Object), fiscal.ObjectSettlement, fiscal.ObjectFiscalEvent)
	}
	if err := q.check(object); err != nil {
		return nil, err
	}
	// The scan runs backwards from just past the newest position it may
	// return: the To bound, or the cursor when that is older.
	var before []byte
	if !q.To.IsZero() {
		before = binary.BigEndian.AppendUint64(nil, uint64(q.To.UnixNano())+1)
	}
	list := cursorList{object: object, account: b.Account().ID}
	if q.Cursor != "" {
		pos, err := list.decode(q.Cursor)
		if err != nil {
			return nil, err
		}
		if before == nil || string(pos) < string(before) {
			before = pos
		}
	}
	page := &Page{Object: "list", Data: []json.RawMessage{}}
	last := before // the position of the last posting examined: where the next page starts
	scanned := 0
	err := scan(ctx, b, object, before, func(pos, raw []byte) (bool, error) {
		if !q.From.IsZero() && len(pos) >= 8 && int64(binary.BigEndian.Uint64(pos)) < q.From.UnixNano() {
			return false, nil // older than From: nothing further can match
		}
		if scanned == budget {
			page.more(list, last)
			return false, nil
		}
		scanned++
		ok, err := q.matches(raw)
		if err != nil {
			return false, err
		}
		if ok {
			if len(page.Data) == q.Limit {
				// A further match exists: the next page starts with it.
				page.more(list, last)
				return false, nil
			}
			page.Data = append(page.Data, raw)
		}
		last = pos
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// more marks the page as followed by another that starts after pos.
func (p *Page) more(list cursorList, pos []byte) {
	p.HasMore = true
	p.NextCursor = list.encode(pos)
}

// matches applies the filters that are not part of the index key.
func (q Query) matches(raw []byte) (bool, error) {
	if q.ReviewStatus == "" && q.Status == "" && q.TaxingCountry == "" && q.SettledFrom.IsZero() && q.SettledTo.IsZero() {
		return true, nil
	}
	var d struct {
		ReviewStatus   string
		Settlement     struct{ Timestamp string }
		Payment        struct{ Timestamp string }
		Classification struct{ Status, TaxingCountry string }
		Determination  struct{ Status, TaxingCountry string }
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return false, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	det, ts := d.Classification, d.Settlement.Timestamp
	if d.Payment.Timestamp != "" {
		det, ts = d.Determination, d.Payment.Timestamp
	}
	if q.ReviewStatus != "" && d.ReviewStatus != q.ReviewStatus {
		return false, nil
	}
	if q.Status != "" && det.Status != q.Status {
		return false, nil
	}
	if q.TaxingCountry != "" && det.TaxingCountry != invoicelaw.ISOCountry(q.TaxingCountry) {
		return false, nil
	}
	if !q.SettledFrom.IsZero() || !q.SettledTo.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return false, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record has an unreadable timestamp", Err: err}
		}
		if (!q.SettledFrom.IsZero() && t.Before(q.SettledFrom)) || (!q.SettledTo.IsZero() && t.After(q.SettledTo)) {
			return false, nil
		}
	}
	return true, nil
}

// cursorList is the list a cursor belongs to: one kind of record of one
// account.
type cursorList struct{ object, account string }

// tag is the tag of a position in the list.
func (l cursorList) tag(pos []byte) []byte {
	h := sha256.New()
	h.Write([]byte{cursorVersion})
	h.Write([]byte(l.object + "\x00" + l.account + "\x00"))
	h.Write(pos)
	return h.Sum(nil)[:cursorTagLen]
}

// encode makes the opaque cursor of a position in the list's index: the
// version byte, the key after the account prefix and the tag, base64url.
// The account prefix is not in the cursor, so a cursor can only ever
// address the caller's own records.
func (l cursorList) encode(pos []byte) string {
	b := append([]byte{cursorVersion}, pos...)
	return base64.RawURLEncoding.EncodeToString(append(b, l.tag(pos)...))
}

// decode returns the position of a cursor of the list.
func (l cursorList) decode(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && len(b) > 0 && b[0] == 1 {
		return nil, badRequest("cursor", "was issued before this service changed its cursors; start again from the first page")
	}
	if err != nil || len(b) < 1+8+cursorTagLen || len(b) > 1+8+128+cursorTagLen || b[0] != cursorVersion {
		return nil, badRequest("cursor", "is not a cursor this service issued; pass next_cursor of the previous page unchanged")
	}
	pos, tag := b[1:len(b)-cursorTagLen], b[len(b)-cursorTagLen:]
	if !bytes.Equal(tag, l.tag(pos)) {
		return nil, badRequest("cursor", "is not a cursor of this list (another list's or account's, or altered); pass next_cursor of the previous page unchanged")
	}
	return pos, nil
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

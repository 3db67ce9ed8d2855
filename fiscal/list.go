package fiscal

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// Listing limits (spec §4 leaves GET /settlements open; README "Listing").
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
	// maxListScan bounds the postings one page may examine, so that a
	// selective filter over a long history costs bounded work per request: a
	// page that hits the bound may hold fewer than limit items, and has_more
	// with next_cursor say where to go on.
	maxListScan = 2000
	listBatch   = 256
)

// ListQuery selects a page of an account's records, newest first.
//
// The order is the time the service recorded each record (createdAt),
// newest first, ties broken by id: the order of the ledger's account-time
// index, in which a new record can only appear before the first page, so a
// cursor never skips or repeats a record. From and To bound createdAt;
// SettledFrom and SettledTo bound the settlement timestamp (the chargeable
// event, Art. 63 VAT Directive, which an OSS return is organised by). Every
// bound is inclusive; a date means the whole UTC day.
type ListQuery struct {
	Limit         int       // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor        string    // next_cursor of the previous page; "" for the first page
	From, To      time.Time // createdAt bounds; zero means unbounded
	SettledFrom   time.Time // settlement timestamp bounds; zero means unbounded
	SettledTo     time.Time
	ReviewStatus  string // settlements only: PROCESSED or PENDING_MANUAL_REVIEW
	Status        string // fiscal events only: DETERMINED or MANUAL_REVIEW_REQUIRED
	TaxingCountry string // ISO 3166-1 alpha-2 (GR for Greece; EL is accepted)
}

// listParams are the query parameters ParseListQuery knows; any other is a
// BAD_REQUEST, so that a misspelt filter is not silently ignored.
var listParams = []string{"cursor", "from", "limit", "reviewStatus", "settledFrom", "settledTo", "status", "taxingCountry", "to"}

// ParseListQuery reads a ListQuery from URL query parameters (limit, cursor,
// from, to, settledFrom, settledTo, reviewStatus, status, taxingCountry).
// Unknown and repeated parameters are BAD_REQUEST errors whose Field is the
// parameter name.
func ParseListQuery(v url.Values) (ListQuery, error) {
	var q ListQuery
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names) // report the same error for the same query
	for _, name := range names {
		i := sort.SearchStrings(listParams, name)
		if i == len(listParams) || listParams[i] != name {
			field := name
			if field == "" {
				field = "query" // "?=x": a parameter without a name
			}
			return q, badRequest(field, "unknown query parameter %q; known: %s", name, strings.Join(listParams, ", "))
		}
		if len(v[name]) > 1 {
			return q, badRequest(name, "query parameter %q is repeated", name)
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxListLimit {
			return q, badRequest("limit", "must be an integer from 1 to %d", MaxListLimit)
		}
		q.Limit = n
	}
	q.Cursor = v.Get("cursor")
	var err error
	if q.From, err = parseBound("from", v.Get("from"), false); err != nil {
		return q, err
	}
	if q.To, err = parseBound("to", v.Get("to"), true); err != nil {
		return q, err
	}
	if q.SettledFrom, err = parseBound("settledFrom", v.Get("settledFrom"), false); err != nil {
		return q, err
	}
	if q.SettledTo, err = parseBound("settledTo", v.Get("settledTo"), true); err != nil {
		return q, err
	}
	q.ReviewStatus, q.Status = v.Get("reviewStatus"), v.Get("status")
	if c := v.Get("taxingCountry"); c != "" {
		if q.TaxingCountry, err = parseCountry("taxingCountry", c); err != nil {
			return q, err
		}
	}
	return q, nil
}

// parseBound reads a date (YYYY-MM-DD: the whole UTC day) or an RFC 3339
// instant. An upper bound on a date is the day's last nanosecond.
func parseBound(field, v string, upper bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.AddDate(0, 0, 1).Add(-time.Nanosecond)
		}
		return checkYear(field, d)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badRequest(field, "must be a date (2026-04-10) or an RFC 3339 instant (2026-04-10T12:00:00Z); in a URL write + as %%2B")
	}
	return checkYear(field, t.UTC())
}

// checkYear keeps a bound where nanosecond Unix time is defined.
func checkYear(field string, t time.Time) (time.Time, error) {
	if !t.IsZero() && (t.Year() < 1970 || t.Year() > 2200) {
		return time.Time{}, badRequest(field, "must lie between the years 1970 and 2200")
	}
	return t, nil
}

// check validates the query for a kind of record.
func (q *ListQuery) check(object string) error {
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		return badRequest("limit", "must be from 1 to %d", MaxListLimit)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return badRequest("to", "is before from")
	}
	if !q.SettledFrom.IsZero() && !q.SettledTo.IsZero() && q.SettledTo.Before(q.SettledFrom) {
		return badRequest("settledTo", "is before settledFrom")
	}
	switch object {
	case objectFiscalEvent:
		if q.ReviewStatus != "" {
			return badRequest("reviewStatus", "does not apply to fiscal events; filter by status (%s or %s)", vat.StatusDetermined, vat.StatusManualReview)
		}
		if q.Status != "" && q.Status != vat.StatusDetermined && q.Status != vat.StatusManualReview {
			return badRequest("status", "must be %s or %s", vat.StatusDetermined, vat.StatusManualReview)
		}
	default:
		if q.Status != "" {
			return badRequest("status", "does not apply to settlements; filter by reviewStatus (%s or %s)", StatusProcessed, StatusPendingReview)
		}
		if q.ReviewStatus != "" && q.ReviewStatus != StatusProcessed && q.ReviewStatus != StatusPendingReview {
			return badRequest("reviewStatus", "must be %s or %s", StatusProcessed, StatusPendingReview)
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

// ListSettlements returns a page of the account's settlement records.
func (e *Engine) ListSettlements(ctx context.Context, accountID string, q ListQuery) (*Page, error) {
	return e.list(ctx, accountID, indexAccountTime, "settlement", q, maxListScan)
}

// ListFiscalEvents returns a page of the account's fiscal events.
func (e *Engine) ListFiscalEvents(ctx context.Context, accountID string, q ListQuery) (*Page, error) {
	return e.list(ctx, accountID, indexAccountFiscalEvents, objectFiscalEvent, q, maxListScan)
}

// cursorVersion opens every cursor, so that a later encoding can be told
// apart (and an old cursor refused with a clear error).
const cursorVersion = 1

// list scans index backwards for the account, examining at most budget
// postings.
func (e *Engine) list(ctx context.Context, accountID, index, object string, q ListQuery, budget int) (*Page, error) {
	if _, ok := e.accounts.Get(accountID); !ok {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if err := q.check(object); err != nil {
		return nil, err
	}
	prefix := append([]byte(accountID), 0)
	// The scan runs backwards from just past the newest key it may return:
	// the To bound, or the cursor when that is older.
	var after []byte
	if !q.To.IsZero() {
		after = binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(q.To.UnixNano())+1)
	}
	if q.Cursor != "" {
		pos, err := decodeCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		c := append(bytes.Clone(prefix), pos...)
		if after == nil || bytes.Compare(c, after) < 0 {
			after = c
		}
	}
	page := &Page{Object: "list", Data: []json.RawMessage{}}
	last := after // the key of the last posting examined: where the next page starts
	scanned := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hits, err := e.ledger.Scan(index, prefix, after, true, listBatch)
		if err != nil {
			return nil, storeError(err)
		}
		for _, h := range hits {
			pos := h.Key[len(prefix):]
			if !q.From.IsZero() && len(pos) >= 8 && int64(binary.BigEndian.Uint64(pos)) < q.From.UnixNano() {
				return page, nil // older than From: nothing further can match
			}
			if scanned == budget {
				return page.more(last[len(prefix):]), nil
			}
			scanned++
			raw, err := e.currentDoc(h.ID)
			if err != nil {
				return nil, err
			}
			ok, err := q.matches(raw)
			if err != nil {
				return nil, err
			}
			if ok {
				if len(page.Data) == q.Limit {
					// A further match exists: the next page starts with it.
					return page.more(last[len(prefix):]), nil
				}
				page.Data = append(page.Data, raw)
			}
			last = h.Key
		}
		if len(hits) < listBatch {
			return page, nil
		}
		after = last
	}
}

// more marks the page as followed by another that starts after pos.
func (p *Page) more(pos []byte) *Page {
	p.HasMore = true
	p.NextCursor = encodeCursor(pos)
	return p
}

// currentDoc returns the stored document of the current revision of id.
func (e *Engine) currentDoc(id string) ([]byte, error) {
	entryID, err := e.currentEntryID(id)
	if err != nil {
		return nil, err
	}
	raw, err := e.ledger.Doc(entryID, docRecord)
	if err != nil {
		return nil, storeError(err)
	}
	return raw, nil
}

// matches applies the filters that are not part of the index key.
func (q ListQuery) matches(raw []byte) (bool, error) {
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
		return false, &Error{Code: CodeInternal, Detail: "stored record is unreadable", Err: err}
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
	if q.TaxingCountry != "" && det.TaxingCountry != isoCountry(q.TaxingCountry) {
		return false, nil
	}
	if !q.SettledFrom.IsZero() || !q.SettledTo.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return false, &Error{Code: CodeInternal, Detail: "stored record has an unreadable timestamp", Err: err}
		}
		if (!q.SettledFrom.IsZero() && t.Before(q.SettledFrom)) || (!q.SettledTo.IsZero() && t.After(q.SettledTo)) {
			return false, nil
		}
	}
	return true, nil
}

// encodeCursor makes the opaque cursor of a position in an account's index:
// the version byte and the key after the account prefix, base64url. The
// account prefix is not in the cursor, so a cursor can only ever address the
// caller's own records.
func encodeCursor(pos []byte) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{cursorVersion}, pos...))
}

func decodeCursor(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+8 || len(b) > 1+8+128 || b[0] != cursorVersion {
		return nil, badRequest("cursor", "is not a cursor this service issued; pass next_cursor of the previous page unchanged")
	}
	return b[1:], nil
}

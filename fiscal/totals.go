package fiscal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// The Art. 59c running totals. An EU seller established in one member
// state taxes its cross-border B2C supplies of telecommunications,
// broadcasting and electronic services where it is established only while
// they stay within EUR 10,000 (exclusive of VAT) in the current and the
// previous calendar year (Art. 59c(1)(c) Directive 2006/112/EC); the supply
// that takes the total over, every later one that year and every one of the
// next year are taxed where the customer is (Art. 59c(2)). The engine keeps
// each account's total per calendar year (in the seller's time zone,
// vat.Seller.ThresholdYear) in a side bucket of the ledger, exact to 12
// decimals, plus the account's opening figures (Seller.OpeningTotals) for
// sales made before it kept the books.
//
// A supply that counts is decided on the totals read before it, and the
// committer checks, in append order, that they are still the totals it
// finds (ledger.Hook.Get): when a concurrent supply of the same account
// counted first, the decision went stale, nothing is written and the
// supply is decided again on the new totals (errStaleTotal). Two
// concurrent supplies can therefore never both be taxed at origin when
// together they cross. The supply that crosses queues the event
// account.threshold_crossed in its own transaction; the event is appended
// right after, once per account and year (a ledger claim), and a restart
// appends any that a crash left queued.

const (
	bucketTotals       = "cross-border-totals" // account \x00 year → exact EUR total
	bucketThresholdDue = "threshold-due"       // account \x00 year → thresholdEvent JSON, until appended
	bucketTotalsOrder  = "cross-border-order"  // orderKey → the Unix nanoseconds of a supply's date (vat.CrossBorderTotals.LatestCounted, CrossedAt)
	claimThreshold     = "threshold"           // one account.threshold_crossed per account and year
	// EventAccountThresholdCrossed is emitted once per account and calendar
	// year, when a supply takes the Art. 59c total over EUR 10,000.
	EventAccountThresholdCrossed = "account.threshold_crossed"
	// ObjectAccountEvent is the document of an account event entry.
	ObjectAccountEvent = "account_event"
)

// errStaleTotal: the running total a supply was decided on changed before
// it reached the committer; decide it again.
var errStaleTotal = errors.New("fiscal: the Art. 59c running total changed; decide again")

func totalKey(accountID string, year int) []byte {
	return strconv.AppendInt(append(append(make([]byte, 0, len(accountID)+7), accountID...), 0), int64(year), 10)
}

// orderKey is the key in bucketTotalsOrder of the date of the account's
// latest supply counted while its year was within the threshold (year 0)
// or of the supply that took year over it: the running total's key and
// "!", so that the engine's cache holds both kinds apart. The dates are
// Unix nanoseconds in decimal, which the cache parses as it does a total.
func orderKey(accountID string, year int) []byte { return append(totalKey(accountID, year), '!') }

// totalCheck is what a counting supply assumed and adds.
type totalCheck struct {
	account string
	year    int
	// cur, prev and latest are the stored totals and the latest date
	// (orderKey(account, 0)) read when deciding ("" = none); date is the
	// supply's, in Unix nanoseconds.
	cur, prev, latest string
	date              int64
	// depends: the decision rests on the totals (within the threshold, or
	// crossed by this supply), so they must be those read; otherwise (over
	// the threshold already, which totals that only grow cannot undo) the
	// value is just added.
	depends bool
	// rule is the rule the decision applied; for current_year_exceeded
	// limit and prevOpening let the committer see whether the previous
	// year went over the limit since (prevOpening: that year's opening
	// figure, which the stored total does not hold).
	rule               string
	limit, prevOpening decimal.Decimal
	add                decimal.Decimal
	crossed            bool
	before, after      decimal.Decimal // with opening figures, for the event
	recordID           string
	// wrote and at are what apply stored and the entry's log index, for
	// the engine's cache of the totals once the append is durable.
	wrote []ledger.Put
	at    int64
	// keys are the side values a decision reads (reads), made once by
	// totalsFor; wroteBuf holds wrote.
	keys     [4]ledger.SideKey
	wroteBuf [3]ledger.Put
}

// totalsCache keeps the running totals the engine last read or committed,
// so that deciding a supply reads no ledger transaction (issue 16: the
// threshold lookup is a map read). It is a cache, never the authority: a
// decision that rests on the totals is checked against the stored ones in
// the committer (totalCheck.apply), and a stale entry there fails with
// errStaleTotal, which forgets the account's entries so the supply is
// decided again on the ledger's values. A commit writes its value with its
// log index, and an older index never overwrites a newer one; a read from
// the ledger fills only an absent entry. Another writer of the same log (a
// PostgreSQL replica) is caught by the same committer check.
type totalsCache struct {
	mu sync.Mutex
	m  map[string]cachedTotal
}

type cachedTotal struct {
	value string          // "" = none stored
	dec   decimal.Decimal // value parsed (zero for none)
	index int64           // log index of the commit that wrote it; -1: read from the ledger
}

// parsedTotal parses a stored total ("" is none: zero; an unreadable one
// is zero too, which the committer's storedTotal refuses).
func parsedTotal(v string) decimal.Decimal {
	d, _ := decimal.NewFromString(cmp.Or(v, "0"))
	return d
}

func (c *totalsCache) get(key []byte) (cachedTotal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[string(key)]
	return v, ok
}

// put stores v under k unless a value from a newer commit is there (a read
// from the ledger, index -1, fills only an absent entry).
func (c *totalsCache) put(k, v string, index int64) {
	t := cachedTotal{value: v, dec: parsedTotal(v), index: index} // parsed outside the lock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedTotal{}
	}
	if old, ok := c.m[k]; !ok || index >= 0 && old.index < index {
		c.m[k] = t
	}
}

// committed records the values a durable append wrote.
func (c *totalsCache) committed(t *totalCheck) {
	if t == nil {
		return
	}
	for _, w := range t.wrote {
		c.put(string(w.Key), string(w.Value), t.at)
	}
}

// forget drops an account's cached totals of year and the year before,
// and its dates (t is a stale decision's check, never nil).
func (c *totalsCache) forget(t *totalCheck) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range t.reads() {
		delete(c.m, string(k.Key))
	}
}

// reads are the side values a decision reads: the year's total, the year
// before's, the latest date counted and the year's crossing date.
func (t *totalCheck) reads() []ledger.SideKey { return t.keys[:] }

// apply runs in the committer: it compares the totals with those the
// decision read and adds the supply's value.
func (t *totalCheck) apply(h *ledger.Hook, d *Draft) error {
	if t == nil {
		return nil
	}
	var got [3][]byte
	for i, k := range t.reads()[:3] {
		var err error
		if got[i], err = h.Get(k.Bucket, k.Key); err != nil {
			return err
		}
	}
	cur, prev, latest := got[0], got[1], got[2]
	if t.depends && (string(cur) != t.cur || string(prev) != t.prev || string(latest) != t.latest) {
		return errStaleTotal
	}
	if t.rule == vat.ThresholdCurrentYear && string(prev) != t.prev {
		// Decided over the threshold on the current year with the
		// previous year read within the limit: a sale of that year
		// committed since (a late one) may have taken it over, and the
		// rule a decision in the log's order applies is then
		// previous_year_exceeded (vat's order of the rules). A review
		// found such records stating the stale rule; they are decided
		// again. Totals only grow, so no other over-threshold rule can
		// change; the figures such a record states are those its
		// decision read (vat.ThresholdCheck).
		if p, err := storedTotal(prev); err != nil || p.Add(t.prevOpening).GreaterThan(t.limit) {
			return cmp.Or(err, errStaleTotal)
		}
	}
	stored, err := storedTotal(cur)
	if err != nil {
		return err
	}
	// The total, and the dates that tell a supply recorded out of its
	// time order (vat.CrossBorderTotals): the latest while the year is
	// within, and the crossing's (or the latest, when later). The first
	// date kept for an account whose year holds supplies counted before
	// the engine kept dates is at least the time they were all recorded
	// by, plus the future a settlement's timestamp may have
	// (wire.MaxClockSkew), so that it bounds their dates too. A sale a
	// person placed at origin whose value took the sum over did not cross
	// (vat.ThresholdCheck.Crossed: no event names it), but a sale dated
	// after it and before the latest did: the latest is the crossing's.
	// A sale a person placed at destination (OSS_B2C) in a year already
	// over was made when it was over: its date bounds the crossing (a
	// DOMESTIC placement, at origin or in the consumer's state, writes
	// nothing: it may have been made before).
	t.wrote, t.at = append(t.wroteBuf[:0], ledger.Put{Bucket: bucketTotals, Key: t.keys[0].Key, Value: []byte(stored.Add(t.add).String())}), h.Index()
	for i, w := range [2]bool{t.depends, t.crossed || t.rule == vat.ThresholdOrderManual && (!t.before.GreaterThan(t.limit) || d.Record.Classification.Regime != vat.RegimeDomestic)} {
		if w { // a date not kept (or unreadable) parses as 0: 1970
			last, _ := strconv.ParseInt(string(latest), 10, 64)
			if len(latest) == 0 && len(cur) > 0 {
				last = d.createdAt.Add(wire.MaxClockSkew).UnixNano()
			}
			t.wrote = append(t.wrote, ledger.Put{Bucket: bucketTotalsOrder, Key: t.keys[2+i].Key, Value: strconv.AppendInt(nil, max(t.date, last), 10)})
		}
	}
	for _, w := range t.wrote {
		if err := h.Put(w.Bucket, w.Key, w.Value); err != nil {
			return err
		}
	}
	if !t.crossed {
		return nil
	}
	return h.Put(bucketThresholdDue, totalKey(t.account, t.year), thresholdEventDoc(t.account, t.year, t.before, t.after, t.recordID, d.createdAt))
}

// thresholdEventDoc is the queued document of the account.threshold_crossed
// event of the supply recordID, recorded at, that took the account's year
// from before to after (strings and an int: it always encodes).
func thresholdEventDoc(account string, year int, before, after decimal.Decimal, recordID string, at time.Time) []byte {
	ev, _ := json.Marshal(thresholdEvent{
		Object: ObjectAccountEvent, Type: EventAccountThresholdCrossed, Account: account, Year: year,
		Limit: "10000", TotalBefore: before.String(), TotalAfter: after.String(), RecordID: recordID,
		At: at.Format(time.RFC3339Nano),
		LegalBasis: "Art. 59c(1)(c) and (2) Directive 2006/112/EC: from this supply on, and for the next calendar year, " +
			"the seller's cross-border B2C telecommunications, broadcasting and electronic services are taxed where the customer is",
	})
	return ev
}

// storedTotal parses a stored running total (absent: zero).
func storedTotal(v []byte) (d decimal.Decimal, err error) {
	if d = decimal.Zero; len(v) > 0 {
		if d, err = decimal.NewFromString(string(v)); err != nil {
			err = fmt.Errorf("fiscal: stored running total %q: %w", v, err)
		}
	}
	return d, err
}

// thresholdEvent is the document of an account.threshold_crossed entry.
type thresholdEvent struct {
	ID          string `json:"id"`
	Object      string `json:"object"` // "account_event"
	Type        string `json:"type"`
	Account     string `json:"account"`
	Year        int    `json:"year"`
	Limit       string `json:"limitEur"`
	TotalBefore string `json:"totalBeforeEur"`
	TotalAfter  string `json:"totalAfterEur"`
	RecordID    string `json:"recordId"` // the supply that crossed
	At          string `json:"at"`
	LegalBasis  string `json:"legalBasis"`
}

// totalsFor reads the account's stored totals for the supply's threshold
// year and the year before, and adds the opening figures.
func (e *Engine) totalsFor(accountID string, seller Seller, at time.Time) (*vat.CrossBorderTotals, *totalCheck, error) {
	year := vat.Seller{Country: seller.Country}.ThresholdYear(at)
	t := &totalCheck{account: accountID, year: year, date: at.UnixNano(), prevOpening: openingTotal(seller, year-1),
		keys: [4]ledger.SideKey{{Bucket: bucketTotals, Key: totalKey(accountID, year)}, {Bucket: bucketTotals, Key: totalKey(accountID, year-1)},
			{Bucket: bucketTotalsOrder, Key: orderKey(accountID, 0)}, {Bucket: bucketTotalsOrder, Key: orderKey(accountID, year)}}}
	var v [4]cachedTotal // as t.reads() lists them
	cached := !e.ledger.Shared()
	for i, k := range t.reads() {
		c, ok := e.totals.get(k.Key)
		v[i], cached = c, cached && ok
	}
	if !cached {
		// All in one read transaction: point reads, no scan. On a log
		// other replicas write too, every decision reads them: the cache
		// learns only this engine's commits, and a review found a
		// replica's records stating the totals it last saw.
		if err := e.ledger.View(func(tx ledger.Tx) error {
			for i, k := range t.reads() {
				v[i] = cachedTotal{value: string(tx.Get(k.Bucket, k.Key))}
				v[i].dec = parsedTotal(v[i].value)
				e.totals.put(string(k.Key), v[i].value, -1)
			}
			return nil
		}); err != nil {
			return nil, nil, storeError(err)
		}
	}
	t.cur, t.prev, t.latest = v[0].value, v[1].value, v[2].value
	open := openingTotal(seller, year)
	// A date not kept is zero nanoseconds, 1970: no supply is before it
	// (DatesKept: the year's supplies counted before the engine kept
	// dates, which no date covers, leave the order in doubt).
	return &vat.CrossBorderTotals{PreviousYear: v[1].dec.Add(t.prevOpening), CurrentYear: v[0].dec.Add(open), Opening: open, DatesKept: true,
		LatestCounted: time.Unix(0, v[2].dec.IntPart()), CrossedAt: time.Unix(0, v[3].dec.IntPart())}, t, nil
}

// CrossBorder are the Art. 59c running totals, with the dates that tell a
// supply recorded out of its time order (vat.CrossBorderTotals), that the
// account's own sale dated at is decided on (totalsFor): read, never
// counted, for a preview to decide the sale as recording will. The
// account's seller must be subject to the threshold (vat.SubjectToThreshold).
func (b *Books) CrossBorder(at time.Time) (*vat.CrossBorderTotals, error) {
	cb, _, err := b.e.totalsFor(b.acc.ID, b.acc.Seller, at)
	return cb, err
}

// openingTotal is the account's opening figure for year.
func openingTotal(seller Seller, year int) decimal.Decimal {
	for _, o := range seller.OpeningTotals {
		if o.Year == year {
			if d, err := decimal.NewFromString(o.EUR); err == nil {
				return d
			}
		}
	}
	return decimal.Zero
}

// emitThresholdEvents appends the account.threshold_crossed entries a
// crossing supply queued, once per account and year; an entry already
// appended (its claim held) only dequeues.
func (e *Engine) emitThresholdEvents(ctx context.Context) {
	var due []thresholdEvent
	var keys [][]byte
	err := e.ledger.View(func(tx ledger.Tx) error {
		return tx.Scan(bucketThresholdDue, nil, nil, false, func(k, v []byte) bool {
			// An entry that is not the event of the account and year it
			// is queued for is never appended: it stays queued, reported
			// (a review found it skipped without a word, or appended as
			// the event of account "" and year 0).
			var ev thresholdEvent
			if err := json.Unmarshal(v, &ev); err != nil || string(k) != string(totalKey(ev.Account, ev.Year)) {
				e.cfg.Logger.Error("a queued account.threshold_crossed is unreadable and is not appended; repair its threshold-due entry", "key", string(k), "err", err)
				return true
			}
			due = append(due, ev)
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
	})
	if err != nil {
		e.cfg.Logger.Error("reading the queued account.threshold_crossed events", "err", err)
	}
	for i, ev := range due {
		ev.ID = fmt.Sprintf("threshold-%s-%d", ev.Account, ev.Year)
		doc, _ := json.Marshal(ev) // strings and an int: it cannot fail
		dequeue := ledger.Put{Bucket: bucketThresholdDue, Key: keys[i]}
		_, err := e.ledger.Append(ctx, ledger.Append{
			Claims: []ledger.Claim{{Space: claimThreshold, Key: ev.Account + ":" + strconv.Itoa(ev.Year), Fingerprint: []byte(ev.ID)}},
			Entry: &ledger.Entry{ID: ev.ID, Leaf: doc, Docs: map[string][]byte{docRecord: doc},
				Postings: []ledger.Posting{{Index: indexAccountEvents, Key: []byte(ev.Account + "\x00"), AppendIndex: true}},
				Puts:     []ledger.Put{{Bucket: bucketHeads, Key: []byte(ev.ID), Value: []byte(ev.ID)}, dequeue}},
			Hook: func(h *ledger.Hook) error {
				out, err := json.Marshal(Event{ID: "evt_" + ev.ID, Type: EventAccountThresholdCrossed, Created: ev.At,
					Sequence: h.Index(), Account: ev.Account, RecordID: ev.ID, EntryID: ev.ID})
				if err != nil {
					return err
				}
				return h.Put(bucketEvents, be64(h.Index()), out)
			},
		})
		if err != nil {
			e.cfg.Logger.Error("appending account.threshold_crossed", "account", ev.Account, "year", ev.Year, "err", err)
			continue
		}
		// Existing (appended before a crash): the claim answered; dequeue.
		_ = e.ledger.Update(func(tx ledger.Tx) error { return tx.Delete(dequeue.Bucket, dequeue.Key) })
	}
	if len(due) > 0 {
		e.outbox.notify()
	}
}

// YearTotal is an account's Art. 59c figure for one calendar year.
type YearTotal struct {
	Year int `json:"year"`
	// CrossBorderEUR is the total, exclusive of VAT, of the cross-border
	// B2C TBE supplies recorded for the year, exact, plus OpeningEUR.
	CrossBorderEUR string `json:"crossBorderEur"`
	OpeningEUR     string `json:"openingEur,omitempty"`
	LimitEUR       string `json:"limitEur"` // "10000"
	// Exceeded: the year's total is over the limit (Art. 59c(1)(c)).
	Exceeded bool `json:"exceeded"`
}

// Totals returns the account's Art. 59c running totals per calendar year,
// oldest first.
func (b *Books) Totals(ctx context.Context) ([]YearTotal, error) {
	byYear := map[int]decimal.Decimal{}
	prefix := []byte(b.acc.ID + "\x00")
	var bad error // a total that does not parse fails the answer: left out, its year would read as empty
	err := b.e.ledger.View(func(tx ledger.Tx) error {
		err := tx.Scan(bucketTotals, prefix, nil, false, func(k, v []byte) bool {
			y, err := strconv.Atoi(string(k[len(prefix):]))
			byYear[y], bad = storedTotal(v)
			bad = cmp.Or(err, bad)
			return bad == nil
		})
		return cmp.Or(err, bad)
	})
	if err != nil {
		return nil, storeError(err)
	}
	for _, o := range b.acc.Seller.OpeningTotals {
		byYear[o.Year] = byYear[o.Year].Add(decimal.Zero) // an opening figure alone makes a year
	}
	limit, out := decimal.NewFromInt(10000), []YearTotal{}
	for y, d := range byYear {
		open := openingTotal(b.acc.Seller, y)
		t := d.Add(open)
		yt := YearTotal{Year: y, CrossBorderEUR: t.String(), LimitEUR: limit.String(), Exceeded: t.GreaterThan(limit)}
		if !open.IsZero() {
			yt.OpeningEUR = open.String()
		}
		out = append(out, yt)
	}
	slices.SortFunc(out, func(a, b YearTotal) int { return a.Year - b.Year })
	return out, nil
}

// metaTotalsBuilt marks a ledger whose running totals were built (by
// rebuildTotals, or from its first entry on) by a version that counts
// what recording counts now. A ledger marked "cross-border-totals/v1" was
// kept by a version that left the account's own fiscal events out (from
// 25 November 2026 until 2cd4b23 and, for a rebuild, 66ebb95, 7 December
// 2026) or counted one waiting for its invoice twice (until 6616537): its
// totals are recounted once, when it is opened.
var metaTotalsBuilt = []byte("cross-border-totals/v2")

const bucketEngineMeta = "engine-meta"

// invariantHeld is a production invariant of a stored fiscal event; one
// that waits for its invoice fails invoice_issuable
// (fiscalevent.InvariantInvoiceIssuable).
type invariantHeld struct {
	Code  string
	Holds bool
}

// rebuildTotals computes the running totals of a ledger written before the
// engine kept them, once, from what recording counts: its settlements and
// its fiscal events (which count since they are decided on the totals;
// a review found the rebuild reading the settlements only). A processed
// settlement counts its value by vat.Determination.RecordedCount; a fiscal
// event (its document calls the classification "determination" and the
// settlement "payment") counts as recording counts it: determined, by its
// threshold section, which only the account's own seller's events have,
// unless it waits for its invoice (then pending, as a settlement the
// invoicing law sent to review; Commit). It
// reads every record once: the cost of opening an old ledger once, after
// which the totals are kept with every commit.
func (e *Engine) rebuildTotals(ctx context.Context) error {
	if _, err := e.ledger.Get(bucketEngineMeta, metaTotalsBuilt); err == nil {
		return nil
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return err
	}
	type year struct {
		account  string
		year     int
		open     decimal.Decimal // the account's opening figure
		supplies []vat.CountedSupply
	}
	years := map[string]*year{} // totalKey → the year's counted supplies
	for _, index := range []string{indexAccountTime, indexAccountFiscalEvents} {
		var after []byte
		for e.ledger.Size() > 0 {
			hits, err := e.ledger.Scan(index, nil, after, false, 1000)
			if err != nil {
				return err
			}
			for _, h := range hits {
				var r struct {
					Object, Account, ReviewStatus string
					Classification, Determination vat.Determination
					Settlement, Payment           struct{ Timestamp string }
					Seller                        struct{ Country string }
					FX                            RecordFX
					Production                    struct{ Invariants []invariantHeld }
				}
				raw, err := e.Document(h.ID)
				if err = cmp.Or(ctx.Err(), err); err != nil || json.Unmarshal(raw, &r) != nil {
					return cmp.Or(err, error(&Error{Code: CodeInternal, Detail: "stored record " + h.ID + " is unreadable", Err: json.Unmarshal(raw, &r)}))
				}
				if d := r.Determination; r.Object == ObjectFiscalEvent && d.Status == vat.StatusDetermined && d.Threshold != nil &&
					!slices.Contains(r.Production.Invariants, invariantHeld{"invoice_issuable", false}) {
					r.Classification, r.Settlement, r.ReviewStatus = d, r.Payment, StatusProcessed
				}
				// A record that counts but whose value or date does not
				// parse fails the build, naming it: left out, the total
				// would be too low and every decision made on it wrong.
				// An account the engine keeps no books for is counted
				// too, in its records' seller's year: the build runs once,
				// and a review found such an account configured later (or
				// kept by another replica of the log) left without totals.
				b, ok := (*e.accounts.Load())[r.Account]
				v, counts, err := r.Classification.RecordedCount(r.Seller.Country, cmp.Or(r.FX.NetEURExact, r.FX.NetEUR))
				ts, terr := time.Parse(time.RFC3339Nano, r.Settlement.Timestamp)
				if !counts || r.ReviewStatus != StatusProcessed || ok && !vat.SubjectToThreshold(b.acc.Seller.Country, b.acc.Seller.OtherEstablishments) {
					continue
				} else if err = cmp.Or(err, terr); err != nil {
					return &Error{Code: CodeInternal, Detail: "stored record " + h.ID + " counts toward the Art. 59c total and is unreadable", Err: err}
				}
				seller := Seller{Country: r.Seller.Country}
				if ok {
					seller = b.acc.Seller
				}
				y := vat.Seller{Country: seller.Country}.ThresholdYear(ts)
				k := string(totalKey(r.Account, y))
				if years[k] == nil {
					years[k] = &year{account: r.Account, year: y, open: openingTotal(seller, y)}
				}
				years[k].supplies = append(years[k].supplies, vat.CountedSupply{Date: ts, Value: v, ID: h.ID})
			}
			if len(hits) < 1000 {
				break
			}
			after = hits[len(hits)-1].Key
		}
	}
	return e.ledger.Update(func(tx ledger.Tx) error {
		if tx.Get(bucketEngineMeta, metaTotalsBuilt) != nil {
			// Another replica built them first and may have counted
			// sales since: a review found this build writing over them.
			return nil
		}
		// The totals and order dates an older version kept are replaced:
		// every account is recounted.
		var stale []ledger.SideKey
		for _, b := range []string{bucketTotals, bucketTotalsOrder} {
			if err := tx.Scan(b, nil, nil, false, func(k, _ []byte) bool {
				stale = append(stale, ledger.SideKey{Bucket: b, Key: slices.Clone(k)})
				return true
			}); err != nil {
				return err
			}
		}
		for _, k := range stale {
			if err := tx.Delete(k.Bucket, k.Key); err != nil {
				return err
			}
		}
		// The order dates are those of the supplies counted (Commit keeps
		// them with every count): the latest, and the supply that took a
		// year over in the order they were made. A review found a recount
		// taking a year over with no account.threshold_crossed and the
		// dates of the older count left deciding later supplies: the event
		// is queued for that supply (once per account and year: the claim
		// answers one already appended).
		latest, puts := map[string]int64{}, []ledger.Put(nil)
		for k, y := range years {
			c := vat.CountYear(y.open, y.supplies)
			latest[y.account] = max(latest[y.account], c.Latest.UnixNano())
			puts = append(puts, ledger.Put{Bucket: bucketTotals, Key: []byte(k), Value: []byte(c.Total.String())})
			if s := c.Crossing; s != nil {
				puts = append(puts, ledger.Put{Bucket: bucketTotalsOrder, Key: orderKey(y.account, y.year), Value: strconv.AppendInt(nil, s.Date.UnixNano(), 10)},
					ledger.Put{Bucket: bucketThresholdDue, Key: []byte(k), Value: thresholdEventDoc(y.account, y.year, c.Before, c.After, s.ID, e.Now().UTC())})
			}
		}
		for a, at := range latest {
			puts = append(puts, ledger.Put{Bucket: bucketTotalsOrder, Key: orderKey(a, 0), Value: strconv.AppendInt(nil, at, 10)})
		}
		for _, p := range puts {
			if err := tx.Put(p.Bucket, p.Key, p.Value); err != nil {
				return err
			}
		}
		return tx.Put(bucketEngineMeta, metaTotalsBuilt, []byte(time.Now().UTC().Format(time.RFC3339)))
	})
}

package returns

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// An EU seller established in one member state taxes its cross-border B2C
// supplies of telecommunications, broadcasting and electronic services
// where it is established while "the total value, exclusive of VAT," of
// such supplies stays within EUR 10,000 in the current and the preceding
// calendar year (Art. 59c(1)(c) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112);
// the supply that takes it over and every later one are taxed where the
// customer is (Art. 59c(2)). A refund reduces the taxable amount of the
// supply it refunds ("where the price is reduced after the supply takes
// place, the taxable amount shall be reduced accordingly", Art. 90(1)),
// but the engine's running total (fiscal's cross-border-totals) only ever
// grows: it is what each decision was made on, in the order the supplies
// were recorded. When refunds of supplies that counted bring a year that
// went over EUR 10,000 back within it, the supplies taxed in the member
// state of consumption because that year was over may have been taxable
// where the seller is established. Whether a later reduction undoes a
// crossing the Directive does not say in terms, and the engine does not
// guess: the return names the year, the refunds and its supplies that
// rested on the crossing, for a person to check before filing (Review).
// The year's total and the refunds are read as of the log checkpoint the
// return states (thresholdRefundReview), so that a final return stays the
// same bytes when later sales of the year are recorded.

// thresholdYears are the supplies in a return's lines taxed at destination
// because a year was over the Art. 59c threshold, by that year.
type thresholdYears map[int]*thresholdYear

type thresholdYear struct {
	limit decimal.Decimal // as the records state it
	idx   []int64
}

// add notes a supply decided under rule in the threshold year year: one
// that crossed, or was made after the year's crossing, rests on that year;
// one of a year after a year over, on the year before.
func (m thresholdYears) add(rule string, year int, limit decimal.Decimal, index int64) {
	switch rule {
	case vat.ThresholdCrossed, vat.ThresholdCurrentYear:
	case vat.ThresholdPreviousYear:
		year--
	default:
		return
	}
	if !limit.IsPositive() {
		limit = decimal.NewFromInt(10000) // Art. 59c(1)(c), for a record that does not state it
	}
	y := m[year]
	if y == nil {
		y = &thresholdYear{limit: limit}
		m[year] = y
	}
	y.idx = append(y.idx, index)
}

// thresholdRefundReview says, per year the return's destination-taxed
// supplies rested on, when the refunds of supplies counted in that year
// bring its total back within the limit, as of one state of the log: that
// of the checkpoint the return states (every figure of it is of that
// state, and a final return is the same bytes each time it is asked for).
// For a provisional return that is head; for a final one the checkpoint
// covering maxIndex, the newest entry the rest of the return names, or,
// when the year is not back within the limit there, the checkpoint of the
// first refund of the year recorded after it (and before head) with which
// it is: the return then names that refund, and its checkpoint covers it
// (the maxIndex returned). The year's total is read from the records
// below that state (yearCounts), only for a year with such a refund.
func thresholdRefundReview(ctx context.Context, b *fiscal.Books, head ledger.Checkpoint, final bool, maxIndex int64, relied thresholdYears) ([]string, int64, error) {
	if len(relied) == 0 {
		return nil, maxIndex, nil
	}
	first := slices.Min(slices.Sorted(maps.Keys(relied)))
	type refunded struct {
		index int64
		net   decimal.Decimal // negative: the correction
	}
	byYear := map[int][]refunded{}
	// A refund is dated on or after the day of the supply it refunds, in
	// the taxing state's time zone: from the last day of the year before,
	// for the seller's own time zone.
	err := refunds.ByDate(ctx, b, strconv.Itoa(first-1)+"-12-31", "", func(rf *refunds.Refund, _ []byte) error {
		th := rf.Classification.Threshold
		if rf.Ledger.Index >= head.Size || th == nil || !th.Counts || th.Counted == nil || relied[th.Year] == nil {
			return nil
		}
		net, err := dec(rf.FX.NetEURExact)
		if rf.FX.NetEURExact == "" {
			net, err = dec(rf.FX.NetEUR)
		}
		if err != nil {
			return unreadable(rf.ID, err)
		}
		byYear[th.Year] = append(byYear[th.Year], refunded{rf.Ledger.Index, net})
		return nil
	})
	if err != nil || len(byYear) == 0 {
		return nil, maxIndex, err
	}
	counted, err := yearCounts(ctx, b, head.Size, byYear)
	if err != nil {
		return nil, maxIndex, err
	}
	// The states to look at, oldest first: the return's own, and for a
	// final return each later one a refund of a relied year was recorded in.
	states := []int64{head.Size}
	if final && maxIndex >= 0 {
		cp, err := b.Engine().Ledger().CoveringCheckpoint(maxIndex)
		if err != nil {
			return nil, maxIndex, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "reading the log checkpoint failed", Err: err}
		}
		states = []int64{cp.Size}
		var later []int64
		for _, rs := range byYear {
			for _, rf := range rs {
				if rf.index >= cp.Size {
					later = append(later, rf.index)
				}
			}
		}
		slices.Sort(later)
		for _, idx := range later {
			if idx < states[len(states)-1] {
				continue // covered by the state before
			}
			cp, err := b.Engine().Ledger().CoveringCheckpoint(idx)
			if err != nil {
				return nil, maxIndex, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "reading the log checkpoint failed", Err: err}
			}
			states = append(states, cp.Size)
		}
	}
	opening := map[int]decimal.Decimal{}
	for _, o := range b.Account().Seller.OpeningTotals {
		if d, err := decimal.NewFromString(o.EUR); err == nil {
			opening[o.Year] = opening[o.Year].Add(d)
		}
	}
	for _, size := range states {
		var out []string
		named := maxIndex
		for _, year := range slices.Sorted(maps.Keys(byYear)) {
			y := relied[year]
			total, reduced, idx := opening[year], decimal.Zero, []int64(nil)
			for _, c := range counted[year] {
				if c.index < size {
					total = total.Add(c.net)
				}
			}
			for _, rf := range byYear[year] {
				if rf.index < size {
					reduced, idx = reduced.Add(rf.net), append(idx, rf.index)
					named = max(named, rf.index)
				}
			}
			net := total.Add(reduced)
			if len(idx) == 0 || !total.GreaterThan(y.limit) || net.GreaterThan(y.limit) {
				continue
			}
			slices.Sort(idx)
			slices.Sort(y.idx)
			out = append(out, fmt.Sprintf("refunds of supplies counted toward the Art. 59c threshold of %d (ledger indexes %v) reduce their taxable amount (Art. 90(1) Directive 2006/112/EC) by EUR %s: "+
				"net of them the year's cross-border supplies total EUR %s, not over EUR %s, while the EUR %s recorded went over it (Art. 59c(1)(c)); "+
				"%d supplies in this return's lines (ledger indexes %v) were taxed in the member state of consumption because %d was over the threshold (Art. 59c(2)), and the engine does not revise them: "+
				"check where they were supplied (Art. 58, or Art. 45 where the seller is established) before filing",
				year, idx, reduced.Neg().StringFixed(2), net.StringFixed(2), y.limit.String(), total.StringFixed(2), len(y.idx), y.idx, year))
		}
		if len(out) > 0 {
			return out, named, nil
		}
	}
	return nil, maxIndex, nil
}

// counted is a supply's value counted toward a year's Art. 59c total and
// the ledger index of the revision that counted it.
type counted struct {
	index int64
	net   decimal.Decimal
}

// countedDoc is what yearCounts reads of a settlement record or a fiscal
// event (whose document calls the classification "determination" and the
// settlement "payment"), as fiscal's rebuild of the totals reads it.
type countedDoc struct {
	ID, Object, ReviewStatus      string
	Classification, Determination vat.Determination
	Settlement, Payment           struct{ Timestamp string }
	Seller                        struct{ Country string }
	FX                            struct{ NetEUR, NetEURExact string }
	Production                    struct {
		Invariants []struct {
			Code  string
			Holds bool
		}
	}
	History []struct {
		ReceiptID string `json:"receiptId"`
	}
	Ledger struct{ Index int64 }
}

// counts is the value the document counts toward the Art. 59c total of
// its year, as recording counts it (Commit, and fiscal's rebuild of the
// totals): a processed settlement, or a determined fiscal event with a
// threshold section not waiting for its invoice, by
// vat.Determination.RecordedCount.
func (d *countedDoc) counts(sellerCountry string) (net decimal.Decimal, year int, ok bool, err error) {
	c, ts, status := d.Classification, d.Settlement.Timestamp, d.ReviewStatus
	if d.Object == fiscal.ObjectFiscalEvent {
		c, ts, status = d.Determination, d.Payment.Timestamp, ""
		waiting := slices.ContainsFunc(d.Production.Invariants, func(i struct {
			Code  string
			Holds bool
		}) bool {
			return i.Code == "invoice_issuable" && !i.Holds
		})
		if c.Status == vat.StatusDetermined && c.Threshold != nil && !waiting {
			status = fiscal.StatusProcessed
		}
	}
	if status != fiscal.StatusProcessed {
		return decimal.Zero, 0, false, nil
	}
	v, counts, err := c.RecordedCount(d.Seller.Country, cmp.Or(d.FX.NetEURExact, d.FX.NetEUR))
	if !counts || err != nil {
		return decimal.Zero, 0, false, err
	}
	if c.Threshold != nil {
		return v, c.Threshold.Year, true, nil
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return decimal.Zero, 0, false, err
	}
	return v, vat.Seller{Country: sellerCountry}.ThresholdYear(at), true, nil
}

// yearCounts reads the supplies counted toward the Art. 59c totals of the
// years of want, by the revisions below size that counted them: the
// account's settlements and fiscal events recorded from the first such
// year on (a supply is recorded at most wire.MaxClockSkew, well within
// localMargin, before it is made). A record revised into a counting state
// counted at the revision that did so.
func yearCounts[V any](ctx context.Context, b *fiscal.Books, size int64, want map[int]V) (map[int][]counted, error) {
	first := slices.Min(slices.Sorted(maps.Keys(want)))
	from := time.Date(first, 1, 1, 0, 0, 0, 0, time.UTC).Add(-localMargin)
	country := b.Account().Seller.Country
	out := map[int][]counted{}
	for _, object := range []string{fiscal.ObjectSettlement, fiscal.ObjectFiscalEvent} {
		q := listing.Query{From: from, Limit: pageSize, Object: object}
		for {
			page, err := listing.List(ctx, b, q)
			if err != nil {
				return nil, err
			}
			for _, raw := range page.Data {
				var d countedDoc
				if err := json.Unmarshal(raw, &d); err != nil {
					return nil, unreadable("", err)
				}
				d.Object = cmp.Or(d.Object, object)
				net, year, ok, err := d.counts(country)
				if err != nil {
					return nil, unreadable(d.ID, err)
				}
				if !ok {
					continue // a record that does not count now never counted (a counted one is not revised)
				}
				index := d.Ledger.Index
				if len(d.History) > 1 {
					// Revised: the first revision that counts is the one that counted.
					if index, net, year, err = firstCounting(b, &d, country); err != nil {
						return nil, err
					}
				}
				if _, ok := want[year]; ok && index < size {
					out[year] = append(out[year], counted{index, net})
				}
			}
			if !page.HasMore {
				break
			}
			q.Cursor = page.NextCursor
		}
	}
	return out, nil
}

// firstCounting reads the revisions of d, oldest first, and returns the
// first that counts toward an Art. 59c total: its ledger index, value and
// year.
func firstCounting(b *fiscal.Books, d *countedDoc, country string) (int64, decimal.Decimal, int, error) {
	for _, h := range d.History {
		entryID := strings.TrimPrefix(h.ReceiptID, "rcpt_")
		raw, err := b.EventDocument(fiscal.Event{ID: "evt_" + entryID, Account: b.Account().ID, RecordID: d.ID, EntryID: entryID})
		if err != nil {
			return 0, decimal.Zero, 0, err
		}
		var rev countedDoc
		if err := json.Unmarshal(raw, &rev); err != nil {
			return 0, decimal.Zero, 0, unreadable(d.ID, err)
		}
		rev.Object = cmp.Or(rev.Object, d.Object)
		net, year, ok, err := rev.counts(country)
		if err != nil {
			return 0, decimal.Zero, 0, unreadable(d.ID, err)
		}
		if ok {
			return rev.Ledger.Index, net, year, nil
		}
	}
	return 0, decimal.Zero, 0, unreadable(d.ID, errors.New("no revision counts toward the Art. 59c total, although the current one does"))
}

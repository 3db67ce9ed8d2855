package returns

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/listing"
)

// A record that waited for review (PENDING_MANUAL_REVIEW) is in no line of
// its quarter's return (Excluded.Pending); resolved (Books.Resolve, or the
// rate it waited for published), it is in the lines of that quarter's
// return from then on. When that happens after the quarter has ended, a
// return of the quarter already submitted counted it in no line, and
// "changes to the figures contained in a VAT return relating to periods
// from the third return period in 2021 shall, after the submission of that
// VAT return, be made only by adjustments in a subsequent return" (Art.
// 61(1) Implementing Regulation (EU) No 282/2011 as replaced by
// Implementing Regulations (EU) 2019/2026 and 2020/1112,
// https://datenbank.nwb.de/Dokument/495230_61; Art. 369g(4) Directive
// 2006/112/EC: the adjustment names the member state, the period and the
// VAT). The ledger does not know when a return was submitted (so the
// supply is not made a Correction, which a return not yet submitted would
// count twice), as for a supply recorded after its quarter (lateReview):
// the return of the quarter in which it was resolved names it with its
// period (resolvedReview), and the return of its own quarter, recomputed,
// says that its lines changed after the quarter and why (changedReview).

// resolvedSince calls fn with the document of every revision of the
// account's settlement records at a ledger index in (after, size), in
// ledger order; only a revision's (entry id "<record id>-r<n>") stored
// document is read, verified against the log (Books.EventDocument).
func resolvedSince(b *fiscal.Books, after, size int64, fn func(raw []byte) error) error {
	acct := b.Account().ID
	return entriesSince(b, after, size, func(entryID string) error {
		recordID, ok := revisionOf(entryID)
		if !ok {
			return nil
		}
		raw, err := b.EventDocument(fiscal.Event{ID: "evt_" + entryID, Account: acct, RecordID: recordID, EntryID: entryID})
		if err != nil {
			return err
		}
		return fn(raw)
	})
}

// entriesSince calls fn with the id of every entry of the account at a
// ledger index in (after, size), in ledger order: the account's entries
// (fiscal.OutboxAccountIndex) are read by key, a page at a time, and no
// document is read here (fn reads the few it wants).
func entriesSince(b *fiscal.Books, after, size int64, fn func(entryID string) error) error {
	l := b.Engine().Ledger()
	prefix := []byte(b.Account().ID + "\x00")
	var cursor []byte
	if after >= 0 {
		cursor = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(after))
	}
	for {
		hits, err := l.Scan(fiscal.OutboxAccountIndex, prefix, cursor, false, pageSize)
		if err != nil {
			return fiscal.StoreError(err)
		}
		for _, h := range hits {
			if len(h.Key) < 8 || int64(binary.BigEndian.Uint64(h.Key[len(h.Key)-8:])) >= size {
				return nil
			}
			if err := fn(h.ID); err != nil {
				return err
			}
		}
		if len(hits) < pageSize {
			return nil
		}
		cursor = hits[len(hits)-1].Key
	}
}

// revisionOf is the record id of a revision's entry id ("<record id>-r<n>",
// n ≥ 2); ok is false for any other entry (a record's first, a refund's
// "<settlement id>-refund-<n>").
func revisionOf(entryID string) (recordID string, ok bool) {
	i := strings.LastIndex(entryID, "-r")
	if i <= 0 {
		return "", false
	}
	n, err := strconv.Atoi(entryID[i+2:])
	if err != nil || n < 2 || strconv.Itoa(n) != entryID[i+2:] {
		return "", false
	}
	return entryID[:i], true
}

// lastEntryBefore is the ledger index of the first entry of the account's
// newest settlement record created before t (-1 when none): every entry
// committed at or after t+margin is at a greater index (a commit does not
// take a day).
func lastEntryBefore(ctx context.Context, b *fiscal.Books, t time.Time) (int64, error) {
	page, err := listing.List(ctx, b, listing.Query{To: t, Limit: 1, Object: fiscal.ObjectSettlement})
	if err != nil || len(page.Data) == 0 {
		return -1, err
	}
	var rc ossRec
	if err := json.Unmarshal(page.Data[0], &rc); err != nil {
		return -1, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	return rc.firstIndex(), nil
}

// quarterOfTime is the UTC calendar quarter of an RFC 3339 time, "" when
// it does not parse.
func quarterOfTime(at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return ""
	}
	t = t.UTC()
	return Period{Year: t.Year(), Quarter: (int(t.Month())-1)/3 + 1}.String()
}

// resolvedReview says, per earlier quarter, which of its OSS supplies
// pending review were resolved in p, this quarter (the resolving
// revisions' ledger indexes): each is in the return of its quarter now,
// and if that return was submitted while it was pending it is declared
// here as an adjustment (Art. 61(1) Implementing Regulation (EU) No
// 282/2011), unless that quarter's return was due more than three years
// before this one's (Art. 61(2); correctableIn, barredReview).
func resolvedReview(resolved map[string][]int64, p Period) []string {
	return perKey(resolved, func(q string, idx []int64) string {
		s := fmt.Sprintf("%d OSS supplies of %s pending review were resolved in this quarter (ledger indexes %v): they are in the return of %s now; "+
			"if that return was submitted before they were resolved, it counted them in excluded.pending, in no line",
			len(idx), q, idx, q)
		if barred(q, p) {
			return s + ": " + barredReview(q)
		}
		return s + fmt.Sprintf(": declare them here as adjustments of %s (Art. 61(1) Implementing Regulation (EU) No 282/2011), which this return does not do", q)
	})
}

// changedReview says which OSS supplies in the lines of p, this return's
// quarter, were recorded (recorded) or resolved from review (resolved)
// after it ended, per quarter in which that happened: a return of p
// submitted before then did not have them in its lines, and the return of
// that quarter names them for the adjustment (lateReview, resolvedReview;
// Art. 61(1) Implementing Regulation (EU) No 282/2011), or, when it comes
// more than three years after p's return was due, no OSS return adjusts
// it (Art. 61(2); barredReview). A recomputed return does not change
// without saying so.
//
// Records of this quarter pending review when it ended and resolved after
// it to a treatment outside the OSS (resolvedOut: reverse charge, a
// national return, outside the scope) left excluded.pending for notInOss.
// Art. 61(1) adjusts "the figures contained in a VAT return", and a
// pending record was in none, so no adjustment follows (the return of the
// quarter of the resolution names none); the return says so, not changing
// silently. No other revision changes a treatment a return counted: only a
// record pending review is ever revised (Books.Resolve, the registry
// re-check and rates.Retry revise nothing else; a determined record is
// final, RECORD_NOT_PENDING).
func changedReview(recorded, resolved, resolvedOut map[string][]int64, p Period) []string {
	adjust := func(q string) string {
		if barred(p.String(), mustPeriod(q)) {
			return barredReview(p.String())
		}
		return fmt.Sprintf("they are declared as adjustments of this quarter in a subsequent return (Art. 61(1) Implementing Regulation (EU) No 282/2011), not by filing this one again; the return of %s names them", q)
	}
	out := perKey(recorded, func(q string, idx []int64) string {
		return fmt.Sprintf("%d OSS supplies of this quarter were recorded in %s, after it ended (ledger indexes %v): they are in this return's lines now; "+
			"a return of this quarter submitted before then did not declare them, and %s",
			len(idx), q, idx, adjust(q))
	})
	out = append(out, perKey(resolved, func(q string, idx []int64) string {
		return fmt.Sprintf("%d OSS supplies of this quarter were pending review when it ended and were resolved in %s (ledger indexes %v): they are in this return's lines now; "+
			"a return of this quarter submitted before then counted them in excluded.pending, and %s",
			len(idx), q, idx, adjust(q))
	})...)
	return append(out, perKey(resolvedOut, func(q string, idx []int64) string {
		return fmt.Sprintf("%d records of this quarter were pending review when it ended and were resolved in %s to a treatment outside the OSS (ledger indexes %v): they are in notInOss now, no longer in excluded.pending; "+
			"a return of this quarter submitted before then counted them in no figure, so no OSS adjustment follows (Art. 61(1) Implementing Regulation (EU) No 282/2011 adjusts the figures a return contained); they are declared where notInOss says",
			len(idx), q, idx)
	})...)
}

// barred reports whether the return of p may no longer adjust that of the
// earlier quarter q (as String gives it): the same three years of Art.
// 61(2) Implementing Regulation (EU) No 282/2011 that make a refund
// excluded.timeBarred (correctableIn).
func barred(q string, p Period) bool {
	op, err := ParsePeriod(q)
	return err == nil && !correctableIn(op, p)
}

// mustPeriod is the quarter q names (the zero Period when it does not).
func mustPeriod(q string) Period {
	p, _ := ParsePeriod(q)
	return p
}

// barredReview is what a review line says of supplies of quarter q that
// reach the books after the return that could adjust its return: as for
// a refund (timeBarredReason), adjustments are made "within three years
// of the date on which the initial return was required to be submitted"
// (Art. 61(2) Implementing Regulation (EU) No 282/2011,
// https://datenbank.nwb.de/Dokument/495230_61), after which the member
// state of consumption's own rules on assessments and amendments apply.
func barredReview(q string) string {
	return fmt.Sprintf("the return of %s was due more than three years before this happened, so no OSS return may adjust it any more (Art. 61(2) Implementing Regulation (EU) No 282/2011): "+
		"declare them with the tax authorities of the member state of consumption under its own rules on assessments and amendments, as excluded.timeBarred does for refunds", q)
}

// createdBefore reports whether the record was created before p began
// (UTC).
func (r *ossRec) createdBefore(p Period) bool {
	t, err := time.Parse(time.RFC3339Nano, r.CreatedAt)
	return err == nil && t.Before(p.Start())
}

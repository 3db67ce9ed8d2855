package fiscal_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/shopspring/decimal"
)

// TestTotalsRebuildRefusesAnUnreadableRecord: the running totals of a
// ledger written before the engine kept them are built from its records
// when it opens (rebuildTotals). A processed settlement that counts toward
// the Art. 59c total but whose settlement time or EUR value does not parse
// cannot be counted; leaving it out makes every later threshold decision
// rest on a total that is too low, without anyone knowing. The engine must
// refuse to open, naming the record, and write no totals. The damaged
// record is one whose leaf is the document itself (an entry without a
// receipt), so that it passes the integrity checks and only its content is
// unreadable.
func TestTotalsRebuildRefusesAnUnreadableRecord(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(rec map[string]any)
		// readable: the control, a copy the rebuild counts (the sale's
		// value, by its threshold section or, without one, its net EUR
		// value), so that the damage alone is what is refused.
		readable bool
	}{
		{"readable copy", func(map[string]any) {}, true},
		{"readable copy without a threshold section", func(rec map[string]any) {
			delete(rec["classification"].(map[string]any), "threshold")
		}, true},
		{"settlement time", func(rec map[string]any) {
			rec["settlement"].(map[string]any)["timestamp"] = "13/04/2026 18:00"
		}, false},
		{"net EUR without a threshold section", func(rec map[string]any) {
			// A record decided before the Art. 59c section existed
			// counts its net EUR value (vat.Determination.RecordedCount).
			delete(rec["classification"].(map[string]any), "threshold")
			fxs := rec["fx"].(map[string]any)
			fxs["netEur"], fxs["netEurExact"] = "1.234,56", "1.234,56"
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
			e, err := fiscal.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					e.Close()
				}
			}()
			b := fiscaltest.Books(t, e, 0)
			ctx := context.Background()
			res, err := b.Settle(ctx, fiscaltest.Request(0, "1234.56", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			kept, err := b.Totals(ctx)
			if err != nil || len(kept) != 1 {
				t.Fatalf("kept totals %+v %v", kept, err)
			}
			if res.Record.Classification.Threshold == nil || !res.Record.Classification.Threshold.Counts {
				t.Fatalf("the sale does not count toward the threshold (%+v): the case needs one that does", res.Record.Classification.Threshold)
			}
			var rec map[string]any
			if err := json.Unmarshal(res.JSON, &rec); err != nil {
				t.Fatal(err)
			}
			const damagedID = "stl_damaged0000000000000000"
			rec["id"] = damagedID
			c.damage(rec)
			doc, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			key := append([]byte(fiscaltest.AccountID(0)+"\x00"), binary.BigEndian.AppendUint64(nil, uint64(time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC).UnixNano()))...)
			key = append(key, damagedID...)
			if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{
				ID: damagedID, Leaf: doc, Docs: map[string][]byte{"record": doc},
				Postings: []ledger.Posting{{Index: fiscal.TimeIndexSettlement, Key: key}},
			}}); err != nil {
				t.Fatal(err)
			}
			if got, err := e.Document(damagedID); err != nil || string(got) != string(doc) {
				t.Fatalf("the damaged record is not served as stored (%v): the case needs one that passes the integrity checks", err)
			}
			// Forget the totals, as a ledger of an older version never had them.
			fiscaltest.ForgetTotals(t, e, "2026")
			closed = true
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e2, err := fiscal.New(cfg)
			if c.readable {
				if err != nil {
					t.Fatalf("opening on a readable copy: %v", err)
				}
				defer e2.Close()
				totals, err := fiscaltest.Books(t, e2, 0).Totals(ctx)
				th := res.Record.Classification.Threshold
				copyCounts := *th.Counted
				if _, ok := rec["classification"].(map[string]any)["threshold"]; !ok {
					copyCounts = decimal.RequireFromString(cmp.Or(res.Record.FX.NetEURExact, res.Record.FX.NetEUR))
				}
				want := decimal.RequireFromString(kept[0].CrossBorderEUR).Add(copyCounts)
				if err != nil || len(totals) != 1 || !decimal.RequireFromString(totals[0].CrossBorderEUR).Equal(want) {
					t.Fatalf("rebuilt totals %+v (%v); want %s, the sale and its copy", totals, err, want)
				}
				return
			}
			if err == nil {
				totals, terr := fiscaltest.Books(t, e2, 0).Totals(ctx)
				e2.Close()
				t.Fatalf("the engine opened on a ledger with an unreadable counting record; totals %+v (%v)", totals, terr)
			}
			var fe *fiscal.Error
			if !errors.As(err, &fe) || fe.Code != fiscal.CodeInternal || !strings.Contains(err.Error(), damagedID) {
				t.Fatalf("opening: %v; want an internal error naming %s", err, damagedID)
			}
			// Nothing was built: the next start refuses it again rather
			// than serve totals marked as built.
			if e3, err := fiscal.New(cfg); err == nil {
				e3.Close()
				t.Fatal("the second start opened the engine: the failed build was marked as done")
			}
		})
	}
}

// TestTotalsRefuseAnUnreadableStoredTotal: an account's Art. 59c total
// that does not parse (a damaged side value: the totals are not covered by
// the log) is reported, not left out of the account's totals as a year
// with no supplies; the committer refuses it likewise (storedTotal).
func TestTotalsRefuseAnUnreadableStoredTotal(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{fiscaltest.AccountID(0) + "\x002026", "857,06"},
		{fiscaltest.AccountID(0) + "\x0020x6", "857.06"},
	} {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		if _, err := b.Settle(ctx, fiscaltest.Request(0, "1234.56", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
		if err := e.Ledger().Update(func(tx ledger.Tx) error {
			return tx.Put("cross-border-totals", []byte(c.key), []byte(c.value))
		}); err != nil {
			t.Fatal(err)
		}
		totals, err := b.Totals(ctx)
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeInternal {
			t.Errorf("totals with %q = %q stored: %+v (%v); want an internal error", c.key, c.value, totals, err)
		}
	}
}

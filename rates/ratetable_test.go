package rates_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

func codesOf(reasons []vat.Reason) []string {
	var out []string
	for _, r := range reasons {
		out = append(out, r.Code)
	}
	return out
}

// outsideTable is what an engine on the embedded table recorded for days
// after the table's last day: the ids of a settlement to France, one a
// person resolved (with facts that leave it outside the table), one
// without the buyer's country, and a fiscal event to France.
type outsideTable struct {
	sale, resolved, noCountry, event string
}

// recordOutsideTable opens an engine on cfg (the embedded table), records
// the four, checks that each waits for a newer table, and closes it.
func recordOutsideTable(t *testing.T, cfg fiscal.Config, at string) outsideTable {
	t.Helper()
	ctx := context.Background()
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := fiscaltest.Books(t, e, 0)
	var ids outsideTable
	for i, p := range []*string{&ids.sale, &ids.resolved, &ids.noCountry} {
		country := "FR"
		if p == &ids.noCountry {
			country = ""
		}
		res, err := b.Settle(ctx, fiscaltest.Request(1+i, "10.00", country, at), "")
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codesOf(r.ReviewReasons), vat.ReasonDateOutsideRateTable) {
			t.Fatalf("settlement %d on the embedded table at %s: %s %v, want pending date_outside_rate_table", i, at, r.ReviewStatus, r.ReviewReasons)
		}
		*p = res.Record.ID
	}
	rr, err := b.Resolve(ctx, ids.resolved, fiscal.Resolution{ResolvedBy: "ops@example.com", Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, Note: "customer in France"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rr.Record; r.Revision != 2 || r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codesOf(r.ReviewReasons), vat.ReasonDateOutsideRateTable) {
		t.Fatalf("resolved on the embedded table: revision %d %s %v", r.Revision, r.ReviewStatus, r.ReviewReasons)
	}
	ev, err := fiscalevent.New(e).Record(ctx, fiscaltest.AccountID(0), fiscalEvent(9, "10.00", "FR", at), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Event.Production.Receipt || !slices.Contains(codesOf(ev.Event.Determination.Reasons), vat.ReasonDateOutsideRateTable) {
		t.Fatalf("fiscal event on the embedded table: receipt %v, reasons %v", ev.Event.Production.Receipt, ev.Event.Determination.Reasons)
	}
	ids.event = ev.Event.ID
	// The engine's own table covers none of them: nothing to re-decide.
	if n, err := rates.RetryRateTable(ctx, e); err != nil || n != 0 {
		t.Fatalf("RetryRateTable on the table that decided them: %d, %v", n, err)
	}
	return ids
}

// TestRateTableLoadedRedecides: records decided while the engine's VAT
// rate table ended before their day (date_outside_rate_table) are decided
// again by the rules, as a new revision (cause rate_table_loaded), once
// the engine is restarted with a table that covers it: the sale at the
// new table's rate with its invoice and a settlement.processed event, the
// fiscal event with its receipt and invoice, the record without a
// country still pending for that reason alone; the record a person
// resolved is left alone. Again, and after another restart, nothing is
// written.
func TestRateTableLoadedRedecides(t *testing.T) {
	pgtest.EachBackend(t, func(t *testing.T) {
		tbl, first := fiscaltest.NextYearRates(t, "test-next-year.1")
		supplyDay := first.AddDate(0, 0, 13)
		now := supplyDay.Add(36 * time.Hour)
		at := supplyDay.Add(14*time.Hour + 30*time.Minute).Format(time.RFC3339)
		src := fiscaltest.SyntheticUSD(t, first, "rates ratetable_test")
		ctx := context.Background()

		cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
		cfg.FX = src
		ids := recordOutsideTable(t, cfg, at)

		cfg.Rates = tbl
		e := fiscaltest.Engine(t, cfg)
		// All four wait in the queue (the metrics' rate_table_wait).
		if q, err := e.Queues(); err != nil || q.WaitingForRateTable != 4 {
			t.Fatalf("queued before the retry: %+v, %v; want 4 waiting for a rate table", q, err)
		}
		n, err := rates.RetryRateTable(ctx, e)
		if err != nil || n != 3 {
			t.Fatalf("RetryRateTable on a covering table: %d revised, %v; want 3", n, err)
		}
		if q, err := e.Queues(); err != nil || q.WaitingForRateTable != 0 {
			t.Fatalf("queued after the retry: %+v, %v; want none", q, err)
		}
		b := fiscaltest.Books(t, e, 0)

		r, _, err := b.Record(ctx, ids.sale)
		if err != nil {
			t.Fatal(err)
		}
		c := r.Classification
		if r.Revision != 2 || r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil || c.RatePercent == nil || c.RatePercent.String() != "21.5" ||
			c.RateSource == nil || c.RateSource.Table != "test-next-year.1" {
			t.Fatalf("sale after the table: revision %d %s %v rate %v source %+v", r.Revision, r.ReviewStatus, r.ReviewReasons, c.RatePercent, c.RateSource)
		}
		if h := r.History[1]; h.Cause != fiscal.CauseRateTableLoaded || h.EventType != fiscal.EventSettlementProcessed || h.ResolvedBy != "" {
			t.Errorf("sale's revision %+v", h)
		}

		r, _, err = b.Record(ctx, ids.noCountry)
		if err != nil {
			t.Fatal(err)
		}
		if codes := codesOf(r.ReviewReasons); r.Revision != 2 || r.ReviewStatus != fiscal.StatusPendingReview ||
			slices.Contains(codes, vat.ReasonDateOutsideRateTable) || !slices.Contains(codes, vat.ReasonBuyerCountryMissing) || r.History[1].Cause != fiscal.CauseRateTableLoaded {
			t.Errorf("record without a country: revision %d %s %v", r.Revision, r.ReviewStatus, codes)
		}

		r, _, err = b.Record(ctx, ids.resolved)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision != 2 || r.History[1].Cause != fiscal.CauseResolution {
			t.Errorf("a record a person resolved was revised: revision %d %+v", r.Revision, r.History[len(r.History)-1])
		}

		ev, _, err := fiscalevent.New(e).Get(ctx, fiscaltest.AccountID(0), ids.event)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Revision != 2 || !ev.Production.Receipt || ev.Invoice == nil || ev.Determination.RatePercent == nil || ev.Determination.RatePercent.String() != "21.5" ||
			ev.History[1].Cause != fiscal.CauseRateTableLoaded || ev.History[1].EventType != fiscalevent.EventRevised {
			t.Errorf("fiscal event after the table: revision %d receipt %v rate %v history %+v", ev.Revision, ev.Production.Receipt, ev.Determination.RatePercent, ev.History)
		}

		size := e.Ledger().Size()
		if n, err := rates.RetryRateTable(ctx, e); err != nil || n != 0 || e.Ledger().Size() != size {
			t.Errorf("again: %d revised, %v, %d entries written", n, err, e.Ledger().Size()-size)
		}
		e.Close()
		e = fiscaltest.Engine(t, cfg)
		if n, err := rates.RetryRateTable(ctx, e); err != nil || n != 0 || e.Ledger().Size() != size {
			t.Errorf("after a restart: %d revised, %v, %d entries written", n, err, e.Ledger().Size()-size)
		}
	})
}

// TestRateTableLoadedTwoReplicas: two replicas on one PostgreSQL log,
// both started with the covering table, re-decide the waiting records at
// the same time: each record gets exactly one revision.
func TestRateTableLoadedTwoReplicas(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	tbl, first := fiscaltest.NextYearRates(t, "test-next-year.1")
	supplyDay := first.AddDate(0, 0, 13)
	now := supplyDay.Add(36 * time.Hour)
	at := supplyDay.Add(14*time.Hour + 30*time.Minute).Format(time.RFC3339)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.FX, cfg.Store = fiscaltest.SyntheticUSD(t, first, "rates ratetable_test"), url
	ids := recordOutsideTable(t, cfg, at)

	cfg.Rates = tbl
	var engines []*fiscal.Engine
	for range 2 {
		c := cfg
		c.Dir, c.Rand = t.TempDir(), nil
		fiscaltest.CopyKeys(t, filepath.Join(cfg.Dir, "keys"), filepath.Join(c.Dir, "keys"))
		engines = append(engines, fiscaltest.Engine(t, c))
	}
	var wg sync.WaitGroup
	counts := make([]int, len(engines))
	for i, e := range engines {
		wg.Go(func() {
			n, err := rates.RetryRateTable(context.Background(), e)
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != 3 {
		t.Errorf("revised %v, want 3 in all", counts)
	}
	b := fiscaltest.Books(t, engines[0], 0)
	for _, id := range []string{ids.sale, ids.noCountry, ids.resolved} {
		r, _, err := b.Record(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision != 2 || len(r.History) != 2 {
			t.Errorf("%s: revision %d, history %d", id, r.Revision, len(r.History))
		}
	}
	ev, _, err := fiscalevent.New(engines[1]).Get(context.Background(), fiscaltest.AccountID(0), ids.event)
	if err != nil || ev.Revision != 2 {
		t.Errorf("fiscal event: %v revision %d", err, ev.Revision)
	}
}

// TestRateTableLoadedWhileOlderReplicaRuns: during a rolling deploy of a
// newer VAT rate table, a replica still on the older table goes on
// recording sales for days only the newer one covers after the newer
// replica has started and walked the queue once. The newer replica walks
// it again while it runs, and decides those too, without a restart.
func TestRateTableLoadedWhileOlderReplicaRuns(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	tbl, first := fiscaltest.NextYearRates(t, "test-next-year.1")
	supplyDay := first.AddDate(0, 0, 13)
	now := supplyDay.Add(36 * time.Hour)
	at := supplyDay.Add(14*time.Hour + 30*time.Minute).Format(time.RFC3339)
	ctx := context.Background()
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.FX, cfg.Store = fiscaltest.SyntheticUSD(t, first, "rates ratetable_test"), url
	older := fiscaltest.Engine(t, cfg) // the embedded table, which ends before the day

	c := cfg
	c.Dir, c.Rand, c.Rates = t.TempDir(), nil, tbl
	fiscaltest.CopyKeys(t, filepath.Join(cfg.Dir, "keys"), filepath.Join(c.Dir, "keys"))
	newer := fiscaltest.Engine(t, c)
	rates.RetryRateTableEvery(newer, nil, 20*time.Millisecond)

	res, err := fiscaltest.Books(t, older, 0).Settle(ctx, fiscaltest.Request(1, "10.00", "FR", at), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codesOf(r.ReviewReasons), vat.ReasonDateOutsideRateTable) {
		t.Fatalf("the older replica's sale: %s %v, want pending date_outside_rate_table", r.ReviewStatus, r.ReviewReasons)
	}
	b := fiscaltest.Books(t, newer, 0)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, _, err := b.Record(ctx, res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision == 2 {
			if r.ReviewStatus != fiscal.StatusProcessed || r.History[1].Cause != fiscal.CauseRateTableLoaded || r.Classification.RateSource == nil || r.Classification.RateSource.Table != "test-next-year.1" {
				t.Fatalf("revised by the newer replica: %s %v %+v", r.ReviewStatus, r.ReviewReasons, r.History[1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the newer replica has not decided the older one's sale: revision %d %s %v", r.Revision, r.ReviewStatus, codesOf(r.ReviewReasons))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if q, err := newer.Queues(); err != nil || q.WaitingForRateTable != 0 {
		t.Errorf("queued after the walk: %+v, %v", q, err)
	}
}

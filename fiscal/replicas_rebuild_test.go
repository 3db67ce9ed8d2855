package fiscal_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestReplicasStartingWhileTotalsAreBuilt: a PostgreSQL log whose Art. 59c
// running totals were never built (a ledger from before the engine kept
// them, copied to PostgreSQL) is opened by two replicas starting together.
// The first one up serves settlements at once; the running totals must
// still equal the sum of the log's counted supplies afterwards (a second
// replica's build, computed from an older scan, must not overwrite them).
func TestReplicasStartingWhileTotalsAreBuilt(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, start, smallIrishSeller)
	cfg.Store, cfg.Rand, cfg.NoBackground = pgtest.Schema(t), nil, true
	e0, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e0, 0)
	const seeded = 400
	for k := range seeded {
		if _, err := b.Settle(ctx, fiscaltest.Request(k, "5.00", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	}
	e0.Close()
	// An older ledger: no totals, not marked built.
	db, err := pgx.Connect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, "DELETE FROM side WHERE bucket = ANY($1::bytea[])", [][]byte{[]byte("engine-meta"), []byte("cross-border-totals")}); err != nil {
		t.Fatal(err)
	}
	// Hold the sequencer lock while replica A builds, so that B starts
	// before A's build is committed (two replicas started together).
	lock, err := pgx.Connect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(ctx)
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT size FROM log_head FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	type opened struct {
		e   *fiscal.Engine
		err error
	}
	aCh, bCh := make(chan opened, 1), make(chan opened, 1)
	go func() { e, err := fiscal.New(cfg); aCh <- opened{e, err} }()
	waitLockWaiters(t, db, 1)
	cfgB := cfg
	cfgB.Dir = t.TempDir()
	fiscaltest.CopyKeys(t, filepath.Join(cfg.Dir, "keys"), filepath.Join(cfgB.Dir, "keys"))
	go func() { e, err := fiscal.New(cfgB); bCh <- opened{e, err} }()
	time.Sleep(300 * time.Millisecond) // B has looked for the built mark and is reading the log
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a := <-aCh
	if a.err != nil {
		t.Fatal(a.err)
	}
	defer a.e.Close()
	ba := fiscaltest.Books(t, a.e, 0)
	sold := 0
	var bOpened opened
loop:
	for k := seeded; ; k++ {
		select {
		case bOpened = <-bCh:
			break loop
		default:
		}
		if _, err := ba.Settle(ctx, fiscaltest.Request(k, "5.00", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
		sold++
	}
	if bOpened.err != nil {
		t.Fatal(bOpened.err)
	}
	defer bOpened.e.Close()
	t.Logf("replica A settled %d supplies while replica B was starting", sold)
	// The log's counted supplies.
	want := decimal.Zero
	for idx := int64(0); idx < a.e.Ledger().Size(); idx++ {
		ent, err := a.e.Ledger().EntryAt(idx)
		if err != nil {
			t.Fatal(err)
		}
		var rec fiscal.Record
		if json.Unmarshal(ent.Docs["record"], &rec) != nil || rec.Object != fiscal.ObjectSettlement || rec.ReviewStatus != fiscal.StatusProcessed {
			continue
		}
		if th := rec.Classification.Threshold; th != nil && th.Counts && th.Counted != nil {
			want = want.Add(*th.Counted)
		}
	}
	for name, e := range map[string]*fiscal.Engine{"A": a.e, "B": bOpened.e} {
		yts, err := fiscaltest.Books(t, e, 0).Totals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := decimal.Zero
		for _, yt := range yts {
			got = got.Add(decimal.RequireFromString(yt.CrossBorderEUR))
		}
		if !got.Equal(want) {
			t.Errorf("replica %s: stored running totals %s, the log's counted supplies %s", name, got, want)
		}
	}
}

// waitLockWaiters waits until n sessions wait for the log_head row lock.
func waitLockWaiters(t *testing.T, db *pgx.Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var c int
		if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%log_head FOR UPDATE%'`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		if c >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("nobody waits for the sequencer lock")
}

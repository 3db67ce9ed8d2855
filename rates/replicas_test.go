package rates_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/rates"
)

// TestReplicasShareFetchedRates: two replicas on one PostgreSQL log, each
// with its own refresh; only replica A reaches the ECB (B's feed never
// publishes: a firewall, an outage on its side). The documents A fetched
// are in the ledger both read (README "Several replicas on PostgreSQL":
// everything durable is in the database), so B must decide with the
// published rate too, and a settlement that waited for it on B must be
// decided again, whichever replica holds the re-decision lease. A review
// found B deciding fx_rate_unavailable for as long as its own fetch
// failed, and the waiting record left pending.
func TestReplicasShareFetchedRates(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	now := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	ecbA, ecbB := newECBServer(t), newECBServer(t)
	open := func(dir string, ecb *ecbServer) (*fiscal.Engine, *rates.Service) {
		base, err := fx.Embedded()
		if err != nil {
			t.Fatal(err)
		}
		live := fx.NewLiveTable(base)
		cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
		cfg.Dir, cfg.FX, cfg.Store, cfg.Rand = dir, live, url, nil
		e, err := fiscal.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		svc, err := rates.New(e, live, rates.Options{Feeds: ecb.feeds(), Client: ecb.srv.Client(), Logger: fiscaltest.Logger(),
			RetryMin: 5 * time.Millisecond, RetryMax: 40 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return e, svc
	}
	dirB, dirA := t.TempDir(), t.TempDir()
	eB, svcB := open(dirB, ecbB) // B starts first: it holds the re-decision lease
	fiscaltest.CopyKeys(t, filepath.Join(dirB, "keys"), filepath.Join(dirA, "keys"))
	_, svcA := open(dirA, ecbA)
	bookB := fiscaltest.Books(t, eB, 0)
	ctx := context.Background()
	waiting, err := bookB.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := waiting.Record; r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != fiscal.ReasonFXRateUnavailable {
		t.Fatalf("before publication: %s %v", r.ReviewStatus, r.ReviewReasons)
	}
	ecbA.publish("2026-04-14", "1.172513")
	waitFor(t, "replica A to fetch the rate", func() bool { return svcA.Report().Newest == "2026-04-14" })
	waitFor(t, "replica B to have the rate A fetched", func() bool { return svcB.Report().Newest == "2026-04-14" })
	res, err := bookB.Settle(ctx, fiscaltest.Request(2, "5.00", "DE", "2026-04-14T14:40:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusProcessed || r.FX.USDPerEUR == nil || r.FX.USDPerEUR.Raw != "1.172513" {
		t.Fatalf("a settlement on B after A fetched the rate: %s %v", r.ReviewStatus, r.ReviewReasons)
	}
	waitFor(t, "the record that waited on B to be decided", func() bool {
		r, _, err := bookB.Record(ctx, waiting.Record.ID)
		return err == nil && r.Revision == 2 && r.ReviewStatus == fiscal.StatusProcessed
	})
}

package invoicing_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummariesIssuedOnTwoReplicas: a month's supplies recorded on two
// replicas of one PostgreSQL log, then the month's summaries issued on
// both at once while late supplies of the month still arrive on both:
// each buyer gets one summary (the second issue answers it), invoice
// numbers are one gap-free series across replicas, and every supply is
// covered by exactly one invoice, its summary or its own.
func TestSummariesIssuedOnTwoReplicas(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	var now atomic.Pointer[time.Time]
	at := time.Date(2026, 3, 31, 20, 0, 0, 0, time.UTC)
	now.Store(&at)
	summary := fiscaltest.IrishSeller
	summary.Invoicing = fiscal.InvoicingSummaryMonthly
	cfg := fiscaltest.Config(t, at, summary)
	cfg.Clock = func() time.Time { return *now.Load() }
	cfg.Store, cfg.Rand = url, nil
	e0 := fiscaltest.Engine(t, cfg)
	cfg1 := cfg
	cfg1.Dir = t.TempDir()
	fiscaltest.CopyKeys(t, filepath.Join(cfg.Dir, "keys"), filepath.Join(cfg1.Dir, "keys"))
	e1 := fiscaltest.Engine(t, cfg1)
	books := []*fiscal.Books{fiscaltest.Books(t, e0, 0), fiscaltest.Books(t, e1, 0)}
	ctx := context.Background()
	wallets := []string{"0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}
	var supplies []string
	for i := range 30 {
		req := fiscaltest.Request(i, "0.05", "DE", fmt.Sprintf("2026-03-%02dT09:00:00Z", 1+i%28))
		req.PayerWallet = wallets[i%3]
		res, err := books[i%2].Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		supplies = append(supplies, res.Record.ID)
	}
	later := time.Date(2026, 4, 2, 8, 0, 0, 0, time.UTC)
	now.Store(&later)
	var wg sync.WaitGroup
	var mu sync.Mutex
	issued := [2][]*invoicing.SummaryResult{}
	errs := [2]error{}
	for r := range 2 {
		wg.Go(func() {
			issued[r], errs[r] = invoicing.Issue(ctx, books[r], invoicing.SummaryRequest{Period: "2026-03"})
		})
	}
	for i := 30; i < 40; i++ { // late supplies of March, on both replicas, while the summaries are issued
		wg.Go(func() {
			req := fiscaltest.Request(i, "0.05", "DE", "2026-03-30T09:00:00Z")
			req.PayerWallet = wallets[i%3]
			res, err := books[i%2].Settle(ctx, req, "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			supplies = append(supplies, res.Record.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("issue: %v / %v", errs[0], errs[1])
	}
	if len(issued[0]) != 3 || len(issued[1]) != 3 {
		t.Fatalf("summaries: %d and %d, want 3 each", len(issued[0]), len(issued[1]))
	}
	for i := range 3 {
		a, b := issued[0][i], issued[1][i]
		if string(a.JSON) != string(b.JSON) {
			t.Errorf("buyer %d: the two replicas answered different summaries %s / %s", i, a.Summary.Invoice.ID, b.Summary.Invoice.ID)
		}
	}
	// Every supply is covered by exactly one invoice; numbers are one series.
	numbers := map[string]string{}
	for _, id := range supplies {
		c, err := invoicing.Covering(ctx, books[0], id)
		if err != nil {
			t.Fatal(err)
		}
		if c.InvoiceID == "" {
			t.Errorf("supply %s not invoiced: %+v", id, c)
			continue
		}
		numbers[c.InvoiceID] = id
	}
	var ns []string
	for n := range numbers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	for i, n := range ns {
		if want := fmt.Sprintf("F402-2026-%06d", i+1); n != want {
			t.Fatalf("invoice numbers across replicas: %v", ns)
		}
	}
	t.Logf("%d supplies, invoices %v", len(supplies), ns)
}

package fiscal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestSealedOffCommitterUnderRaces: settlements sealed in their callers'
// goroutines at predicted positions, raced by 32 callers and by foreign
// appends that take log indexes the engine did not predict, are stored,
// served and signed exactly as if sealed in the committer: every record
// states its true index, every receipt verifies with its record's and
// invoice's digests opening against the stored bytes, and invoice numbers
// run 1…n without a gap or a repeat.
func TestSealedOffCommitterUnderRaces(t *testing.T) {
	books := benchEngine(t)
	e := books.Engine()
	const n, callers = 300, 32
	results := make([]*fiscal.SettleResult, n+1)
	var wg sync.WaitGroup
	next := make(chan int)
	for range callers {
		wg.Go(func() {
			for i := range next {
				res, err := books.Settle(context.Background(), benchRequest(uint64(i)), "")
				if err != nil {
					t.Error(err)
					continue
				}
				results[i] = res
			}
		})
	}
	wg.Go(func() { // foreign appends: indexes nobody predicted
		for i := range 20 {
			id := fmt.Sprintf("foreign-%d", i)
			if _, err := e.Ledger().Append(context.Background(), ledger.Append{Entry: &ledger.Entry{ID: id, Leaf: []byte(id)}}); err != nil {
				t.Error(err)
			}
		}
	})
	for i := 1; i <= n; i++ {
		next <- i
		if i%50 == 0 { // a retry of a settled payment, racing its first
			go func() { _, _ = books.Settle(context.Background(), benchRequest(uint64(i-1)), "") }()
		}
	}
	close(next)
	wg.Wait()
	if t.Failed() {
		return
	}
	ks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier(ks, e.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	var invoices []string
	indexes := map[int64]bool{}
	for i := 1; i <= n; i++ {
		res := results[i]
		raw, err := e.Document(res.Record.ID)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if string(raw) != string(res.JSON) {
			t.Fatalf("record %d: Settle answered other bytes than the ledger serves", i)
		}
		if j, err := json.Marshal(res.Record); err != nil || string(j) != string(res.JSON) {
			t.Fatalf("record %d: Settle answered a record that is not the one stored (%v):\n%s\n%s", i, err, j, res.JSON)
		}
		ent, err := e.Ledger().Entry(res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.Ledger.Index != ent.Index || indexes[ent.Index] {
			t.Fatalf("record %d states index %d, its entry is at %d", i, res.Record.Ledger.Index, ent.Index)
		}
		indexes[ent.Index] = true
		if res.Record.Invoice == nil {
			t.Fatalf("record %d has no invoice", i)
		}
		invoices = append(invoices, res.Record.Invoice.ID)
		if _, _, err := e.StoredInvoice(res.Record.ID, res.Record.Invoice.UBLSHA256); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		rc, err := books.Receipt(context.Background(), res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		op, err := books.Openings(context.Background(), res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		openings, err := receipt.ParseOpenings(op)
		if err != nil {
			t.Fatal(err)
		}
		claims, err := v.Verify(rc, openings...)
		if err != nil {
			t.Fatalf("receipt of record %d: %v", i, err)
		}
		if claims.Log.Index != ent.Index || claims.Invoice == nil || claims.Invoice.ID != res.Record.Invoice.ID {
			t.Fatalf("receipt of record %d: index %d invoice %v, record says %d %s", i, claims.Log.Index, claims.Invoice, ent.Index, res.Record.Invoice.ID)
		}
	}
	slices.Sort(invoices)
	for i, id := range invoices {
		if want := fmt.Sprintf("F402-2026-%06d", i+1); id != want {
			t.Fatalf("invoice %d is %s, want %s", i, id, want)
		}
	}
	hits, misses := fiscal.NumberingStats(e)
	t.Logf("%d settlements: %d written as sealed, %d sealed again in the committer, %d predictions revoked (made again by their caller)", n, hits, misses, fiscal.PredictionsRevoked(e))
	if hits+misses != n {
		t.Fatalf("%d appends compared in the committer, want %d", hits+misses, n)
	}
	if misses == 0 {
		t.Log("no prediction missed: the recompute path was not exercised this run")
	}
}

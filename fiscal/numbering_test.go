package fiscal_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestInvoiceNumbersAreGapFree: concurrent settlements, some pending (no
// invoice), get invoice numbers 1..n of the account's series without a gap
// or a repeat, each written in the invoice (cbc:ID), the record and the
// receipt; a pending record resolved later takes the next number; another
// account has its own series; the account's prefix opens the number.
func TestInvoiceNumbersAreGapFree(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		seller := fiscaltest.IrishSeller
		seller.InvoicePrefix = "INV-"
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller, fiscaltest.IrishSeller))
		b0, b1 := fiscaltest.Books(t, e, 0), fiscaltest.Books(t, e, 1)
		ctx := context.Background()
		const n = 48
		var mu sync.Mutex
		var numbers []string
		var pending []string
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				country := "DE"
				if i%6 == 0 {
					country = "" // pending: no invoice, no number
				}
				res, err := b0.Settle(ctx, fiscaltest.Request(i, "11.90", country, "2026-04-10T14:30:00Z"), "")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if res.Record.Invoice == nil {
					pending = append(pending, res.Record.ID)
					return
				}
				numbers = append(numbers, res.Record.Invoice.ID)
				ubl, _, err := b0.Invoice(ctx, res.Record.ID)
				if err != nil || !containsID(ubl, res.Record.Invoice.ID) {
					t.Errorf("invoice of %s does not carry %s: %v", res.Record.ID, res.Record.Invoice.ID, err)
				}
			}()
		}
		wg.Wait()
		want := func(k int) []string {
			var out []string
			for i := 1; i <= k; i++ {
				out = append(out, fmt.Sprintf("INV-2026-%06d", i))
			}
			return out
		}
		slices.Sort(numbers)
		if !slices.Equal(numbers, want(len(numbers))) || len(numbers)+len(pending) != n {
			t.Fatalf("numbers %v (pending %d)", numbers, len(pending))
		}
		got, err := b0.Resolve(ctx, pending[0], fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, ResolvedBy: "ops"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if next := fmt.Sprintf("INV-2026-%06d", len(numbers)+1); got.Record.Invoice == nil || got.Record.Invoice.ID != next {
			t.Fatalf("resolved record's invoice %+v, want %s", got.Record.Invoice, next)
		}
		other, err := b1.Settle(ctx, fiscaltest.Request(500, "1.00", "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if other.Record.Invoice.ID != "F402-2026-000001" {
			t.Errorf("the other account's first invoice is %s", other.Record.Invoice.ID)
		}
	})
}

// containsID reports whether the invoice's number element is id.
func containsID(ubl []byte, id string) bool {
	return bytes.Contains(ubl, []byte("<cbc:ID>"+id+"</cbc:ID>"))
}

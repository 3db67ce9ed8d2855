package ledger_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestBenchTemplatesV4 keeps testdata/bench/v4 what the engine writes today
// for three settlements of the demo seller (fiscal.Example's: an Irish OSS
// seller; 11.90 USDC to DE, 249.00 to FR, 3.25 to IT): each entry's leaf (a
// 4.0.0 receipt payload), record, openings and UBL invoice, as Ledger.Entry
// reads them back. The realistic benchmarks build their 4.0.0 entries from
// these files (loadRealisticV4), so a change of what the engine stores
// fails here until -update rewrites them, and the benchmarks follow.
func TestBenchTemplatesV4(t *testing.T) {
	update := flag.Lookup("update").Value.(flag.Getter).Get().(bool) // helpers_test.go's flag
	now := time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC)
	e := fiscaltest.Engine(t, fiscaltest.Config(t, now, fiscaltest.IrishSeller))
	books := fiscaltest.Books(t, e, 0)
	sales := []struct{ amount, country, at string }{
		{"11.90", "DE", "2026-04-10T14:30:00Z"},
		{"249.00", "FR", "2026-04-10T14:35:00Z"},
		{"3.25", "IT", "2026-04-10T14:40:00Z"},
	}
	for i, s := range sales {
		res, err := books.Settle(context.Background(), fiscaltest.Request(i+1, s.amount, s.country, s.at), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusProcessed || res.Record.Receipt.Spec == "" {
			t.Fatalf("sale %d: %s, receipt %q: want a processed record with a receipt", i, res.Record.ReviewStatus, res.Record.Receipt.Spec)
		}
		ent, err := e.Ledger().Entry(res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]byte{
			"leaf.json": ent.Leaf, "record.json": ent.Docs["record"], "ubl.xml": ent.Docs["ubl"], "openings.json": ent.Docs[fiscal.DocOpenings],
		} {
			if len(got) == 0 {
				t.Fatalf("sale %d: no %s", i, name)
			}
			testtool.Golden(t, filepath.Join("testdata", "bench", "v4", fmt.Sprintf("s%d-%s", i, name)), got, update)
		}
	}
}

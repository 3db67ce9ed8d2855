package fiscal

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
)

// TestPlacement: a record rendered unplaced, placed at a guessed index and
// spliced to the true one equals the record placed there directly, and
// unplacing the stored bytes gives back exactly the unplaced form the
// receipt committed to, whatever the widths.
func TestPlacement(t *testing.T) {
	const origin = `log.example/"q"` // an origin that JSON must escape
	rec := Record{ID: "x402-a", Object: ObjectSettlement, Ledger: LedgerRef{Origin: origin, Index: unplacedIndex},
		History: []Revision{{Revision: 1, LedgerIndex: 7, Note: `"ledgerIndex":-1 in a note`}, {Revision: 2, LedgerIndex: unplacedIndex, Cause: "x"}}}
	unplaced, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := placeRecord(unplaced, origin)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.offsets) != 2 {
		t.Fatalf("found %d positions, want 2", len(p.offsets))
	}
	for _, c := range []struct{ guess, index int64 }{{0, 0}, {10, 99}, {123, 456}, {99, 100}, {1_000_000, 7}} {
		want := rec
		want.Ledger.Index = c.index
		want.History = append([]Revision(nil), rec.History...)
		want.History[1].LedgerIndex = c.index
		direct, _ := json.Marshal(want)
		if got := p.at(c.index); !bytes.Equal(got, direct) {
			t.Fatalf("at(%d):\n%s\nwant\n%s", c.index, got, direct)
		}
		doc := p.at(c.guess)
		if offs, digits, ok := p.splices(c.guess, c.index); ok {
			doc = bytes.Clone(doc)
			for _, off := range offs {
				copy(doc[off:], digits)
			}
			if !bytes.Equal(doc, direct) {
				t.Fatalf("splice %d→%d:\n%s\nwant\n%s", c.guess, c.index, doc, direct)
			}
		}
		if got := unplaceRecord(direct, origin, c.index); !bytes.Equal(got, unplaced) && c.index != 7 {
			t.Fatalf("unplace(%d):\n%s\nwant\n%s", c.index, got, unplaced)
		}
		if c.index != 7 && unplacedDigest(direct, origin, c.index) != sha256.Sum256(unplaced) {
			t.Fatalf("unplaced digest at %d differs", c.index)
		}
	}
	if _, err := placeRecord([]byte(`{"id":"x"}`), origin); err == nil {
		t.Fatal("a document without its position was placed")
	}
}

package ledger

import (
	"errors"
	"fmt"
	"testing"
)

// TestDuplicateOfHeldIndexedKey: a batch holding a prebuilt entry that
// posts events/"acct\x00" with AppendIndex and an entry built in the
// committer that posts events/"acct\x00" ‖ be(0), a key entry 0 already
// holds. The second append fails alone with ErrDuplicate and the first is
// appended, on both backends. A review found PostgreSQL's committer
// answering the held key free (it lies below the AppendIndex range the
// batch loaded), so that the insert failed the whole batch.
func TestDuplicateOfHeldIndexedKey(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		prefix := []byte("acct\x00")
		e0 := Entry{ID: "e0", Leaf: []byte("e0"), Postings: []Posting{{Index: "events", Key: prefix, AppendIndex: true}}}
		if a, err := l.Append(t.Context(), Append{Entry: &e0}); err != nil || a.Index != 0 {
			t.Fatalf("e0: %+v %v", a, err)
		}
		held := append(append([]byte{}, prefix...), u64(0)...) // e0's key
		if id, err := l.Lookup("events", held); err != nil || id != "e0" {
			t.Fatalf("Lookup of e0's key: %q %v", id, err)
		}
		e1 := Entry{ID: "e1", Leaf: []byte("e1"), Postings: []Posting{{Index: "events", Key: prefix, AppendIndex: true}}}
		p1, err := l.prepare(e1)
		if err != nil {
			t.Fatal(err)
		}
		batch := []*request{
			{a: Append{Entry: &e1}, prep: p1},
			{a: Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "dup", Leaf: []byte("dup"), Postings: []Posting{{Index: "events", Key: held}}}, nil
			}}},
		}
		res := l.commitDurable(batch)
		if res[0].err != nil {
			t.Errorf("e1 (no conflict) failed with its batch: %v (the duplicate: %v)", res[0].err, res[1].err)
		}
		if !errors.Is(res[1].err, ErrDuplicate) {
			t.Errorf("an entry posting a held key: %v, want ErrDuplicate", res[1].err)
		}
		hits, err := l.Scan("events", prefix, nil, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%q", hits); got != fmt.Sprintf("%q", []Hit{{Key: held, ID: "e0"}, {Key: append(append([]byte{}, prefix...), u64(1)...), ID: "e1"}}) {
			t.Errorf("postings after the batch: %s", got)
		}
	})
}

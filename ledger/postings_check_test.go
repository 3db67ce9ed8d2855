package ledger

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestPostingCheckerBatches: the batched, sorted lookup of postings finds
// exactly the postings whose entry is missing (an ID absent, or a nested
// bucket of that name), and reports the first in walk order, whatever the
// batch it falls in; the same answers as one ids.Get per posting.
func TestPostingCheckerBatches(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "p.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 500
	err = db.Update(func(tx *bolt.Tx) error {
		ids, err := tx.CreateBucket(bucketIDs)
		if err != nil {
			return err
		}
		for i := range n {
			if err := ids.Put(fmt.Appendf(nil, "id-%05d", 2*i), u64(int64(i))); err != nil {
				return err
			}
		}
		_, err = ids.CreateBucket([]byte("id-nested"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// reference is the check as one lookup per posting.
	reference := func(ids *bolt.Bucket, walk [][]byte) int {
		for i, id := range walk {
			if ids.Get(id) == nil {
				return i
			}
		}
		return -1
	}
	for trial := range 200 {
		walk := make([][]byte, 1+rng.IntN(300))
		for i := range walk {
			switch r := rng.IntN(100); {
			case r < 2:
				walk[i] = fmt.Appendf(nil, "id-%05d", 2*rng.IntN(n)+1) // between two IDs
			case r < 3:
				walk[i] = []byte("id-nested")
			case r < 4:
				walk[i] = []byte("zz") // beyond the last ID
			case r < 5:
				walk[i] = nil
			default:
				walk[i] = fmt.Appendf(nil, "id-%05d", 2*rng.IntN(n))
			}
		}
		for _, size := range []int{1, 7, 64, 1000} {
			err := db.View(func(tx *bolt.Tx) error {
				ids := tx.Bucket(bucketIDs)
				pc := &postingChecker{ids: ids, size: size}
				var got error
				for i, id := range walk {
					if got = pc.add([]byte("ix"), fmt.Appendf(nil, "k%d", i), id); got != nil {
						break
					}
				}
				if got == nil {
					got = pc.flush()
				}
				want := ""
				if at := reference(ids, walk); at >= 0 {
					want = fmt.Sprintf(`ledger: check: posting "ix" "k%d" names entry %q, which does not exist`, at, walk[at])
				}
				if fmt.Sprint(got) != want && !(got == nil && want == "") {
					t.Fatalf("trial %d, batch %d: %v, want %q", trial, size, got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

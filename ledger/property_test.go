package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// TestPropertyProofsVerify appends random sequences (random leaf sizes,
// random concurrency and therefore random batch boundaries, duplicate claims,
// failing Builds, close and reopen) and checks after every round, against an
// independent RFC 6962 implementation (refTree): every new checkpoint
// verifies and has the reference root; inclusion proofs for every index in
// every size (small logs) or random (index, size) pairs verify with
// tlog.CheckRecord; consistency proofs between random sizes verify with
// tlog.CheckTree; and Check finds nothing.
func TestPropertyProofsVerify(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		seeds := []uint64{1, 2, 3, 4}
		if testing.Short() {
			seeds = seeds[:1]
		}
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				propertyRun(t, seed)
			})
		}
	})
}

func propertyRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6c6564676572))
	l, path, v := testLedger(t, func(o *Options) { o.MaxBatch = 1 + rng.IntN(8) })
	var leaves [][]byte // by index, from what Append reported
	ref := &refTree{}
	lastCheckpoint := int64(0)
	boom := errors.New("build refused")

	for round := range 40 {
		k := 1 + rng.IntN(12)
		apps := make([]Append, k)
		for j := range apps {
			name := fmt.Sprintf("r%d-%d", round, j)
			claimKey := name
			if round > 0 && rng.IntN(5) == 0 {
				claimKey = fmt.Sprintf("r%d-0", rng.IntN(round)) // a claim already held
			}
			leafLen := 1 + rng.IntN(700)
			fail := rng.IntN(10) == 0
			apps[j] = Append{
				Claims: []Claim{{Space: "payment", Key: claimKey, Fingerprint: []byte{byte(rng.IntN(2))}}},
				Build: func(index int64) (Entry, error) {
					if fail {
						return Entry{}, boom
					}
					return Entry{ID: name, Leaf: propertyLeaf(name, index, leafLen)}, nil
				},
			}
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, a := range apps {
			wg.Go(func() {
				got, err := l.Append(context.Background(), a)
				var ce *ClaimConflictError
				switch {
				case err == nil && !got.Existing:
					e, _ := a.Build(got.Index)
					mu.Lock()
					for int64(len(leaves)) <= got.Index {
						leaves = append(leaves, nil)
					}
					leaves[got.Index] = e.Leaf
					mu.Unlock()
				case err == nil, errors.As(err, &ce), errors.Is(err, boom):
				default:
					t.Errorf("append: %v", err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		size := l.Size()
		if int64(len(leaves)) != size {
			t.Fatalf("round %d: %d leaves reported, Size() %d", round, len(leaves), size)
		}
		for i := int64(len(ref.leaves)); i < size; i++ {
			if leaves[i] == nil {
				t.Fatalf("round %d: index %d was never reported", round, i)
			}
			ref.add(leaves[i])
		}
		lastCheckpoint = verifyNewCheckpoints(t, l, v, ref, lastCheckpoint)
		verifyProofs(t, l, ref, rng)
		if rng.IntN(8) == 0 {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = reopen(t, path)
		}
	}
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
}

// propertyLeaf is a leaf of length n derived from name and index.
func propertyLeaf(name string, index int64, n int) []byte {
	prefix := fmt.Sprintf("%s@%d:", name, index)
	leaf := make([]byte, 0, max(n, len(prefix)))
	leaf = append(leaf, prefix...)
	for len(leaf) < n {
		leaf = append(leaf, byte('a'+len(leaf)%26))
	}
	return leaf
}

// verifyNewCheckpoints checks every checkpoint stored after size `after`:
// it verifies, has the reference root, and is consistent with the one
// before it. It returns the latest size.
func verifyNewCheckpoints(t *testing.T, l *Ledger, v note.Verifier, ref *refTree, after int64) int64 {
	t.Helper()
	prev := after
	for size := after + 1; size <= l.Size(); size++ {
		cp, err := l.CheckpointAt(size)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := ParseCheckpoint(cp.Note, v)
		if err != nil {
			t.Fatalf("checkpoint %d: %v", size, err)
		}
		if parsed.Size != size || parsed.Root != ref.root(size) {
			t.Fatalf("checkpoint %d: size %d root %s, reference root %s", size, parsed.Size, parsed.Root, ref.root(size))
		}
		if prev > 0 {
			p, err := l.ConsistencyProof(prev, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckTree(p, size, parsed.Root, prev, ref.root(prev)); err != nil {
				t.Fatalf("checkpoint %d not consistent with %d: %v", size, prev, err)
			}
		}
		prev = size
	}
	if prev != l.Size() {
		t.Fatalf("no checkpoint at the log size %d (last %d)", l.Size(), prev)
	}
	return prev
}

// verifyProofs checks inclusion and consistency proofs against the
// reference tree: exhaustively while the log is small, by random sampling
// after that.
func verifyProofs(t *testing.T, l *Ledger, ref *refTree, rng *rand.Rand) {
	t.Helper()
	n := l.Size()
	checkIncl := func(i, size int64) {
		p, err := l.InclusionProof(i, size)
		if err != nil {
			t.Fatalf("InclusionProof(%d, %d): %v", i, size, err)
		}
		if err := tlog.CheckRecord(p, size, ref.root(size), i, ref.leaves[i]); err != nil {
			t.Fatalf("inclusion of %d in %d does not verify: %v", i, size, err)
		}
		// The proof must not verify a different leaf.
		other := (i + 1) % size
		if other != i {
			if err := tlog.CheckRecord(p, size, ref.root(size), i, ref.leaves[other]); err == nil {
				t.Fatalf("inclusion proof of %d in %d verifies leaf %d too", i, size, other)
			}
		}
	}
	checkCons := func(from, to int64) {
		p, err := l.ConsistencyProof(from, to)
		if err != nil {
			t.Fatalf("ConsistencyProof(%d, %d): %v", from, to, err)
		}
		if err := tlog.CheckTree(p, to, ref.root(to), from, ref.root(from)); err != nil {
			t.Fatalf("consistency %d→%d does not verify: %v", from, to, err)
		}
	}
	if n <= 40 {
		for size := int64(1); size <= n; size++ {
			for i := range size {
				checkIncl(i, size)
			}
			for from := int64(1); from <= size; from++ {
				checkCons(from, size)
			}
		}
		return
	}
	for range 60 {
		size := 1 + rng.Int64N(n)
		checkIncl(rng.Int64N(size), size)
		from := 1 + rng.Int64N(size)
		checkCons(from, size)
	}
	if h, err := l.TreeHash(n); err != nil || h != ref.root(n) {
		t.Fatalf("TreeHash(%d) = %s, %v; reference %s", n, h, err, ref.root(n))
	}
}

package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// memHashes is an in-memory tlog.HashReader.
type memHashes []tlog.Hash

func (m memHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(m)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = m[x]
	}
	return out, nil
}

// TestFrontierMatchesTlog: the stored hashes the frontier emits for every
// leaf are tlog.StoredHashes', its root is tlog.TreeHash and the RFC 6962
// reference tree's, and a frontier loaded from the stored hashes at any size
// continues identically.
func TestFrontierMatchesTlog(t *testing.T) {
	var f frontier
	var stored memHashes
	var ref refTree
	rng := rand.New(rand.NewPCG(1, 2))
	for n := int64(0); n < 1100; n++ {
		leaf := binary.BigEndian.AppendUint64([]byte("leaf"), uint64(n))
		ref.add(leaf)
		want, err := tlog.StoredHashes(n, leaf, stored)
		if err != nil {
			t.Fatal(err)
		}
		got := f.append(tlog.RecordHash(leaf), nil)
		if len(got) != len(want) {
			t.Fatalf("leaf %d: %d stored hashes, tlog stores %d", n, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("leaf %d: stored hash %d differs from tlog's", n, i)
			}
		}
		stored = append(stored, got...)
		if int64(len(stored)) != tlog.StoredHashCount(n+1) {
			t.Fatalf("size %d: %d hashes, want %d", n+1, len(stored), tlog.StoredHashCount(n+1))
		}
		th, err := tlog.TreeHash(n+1, stored)
		if err != nil {
			t.Fatal(err)
		}
		if f.root() != th || th != ref.root(n+1) {
			t.Fatalf("size %d: frontier root %s, tlog %s, reference %s", n+1, f.root(), th, ref.root(n+1))
		}
		if rng.IntN(50) == 0 {
			g, err := loadFrontier(n+1, stored)
			if err != nil {
				t.Fatal(err)
			}
			if g != f {
				t.Fatalf("size %d: loaded frontier differs", n+1)
			}
		}
	}
	var empty frontier
	if empty.root() != sha256.Sum256(nil) {
		t.Error("the empty tree's root is not SHA-256 of the empty string")
	}
}

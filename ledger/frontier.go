package ledger

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// frontier is the right edge of an RFC 6962 Merkle tree of size leaves: for
// every set bit L of size, node[L] is the root of the complete subtree of
// 2^L leaves on the tree's right edge (the last complete level-L node).
// Appending a leaf and computing the root need no stored hash: appending
// combines at most log2(n) nodes (the ones the leaf completes, which are
// exactly the interior hashes tlog stores for it), and the root folds at
// most log2(n) nodes. The committer keeps one, so a commit reads no hash.
type frontier struct {
	size int64
	node [63]tlog.Hash
}

// append adds the leaf with record hash h (RFC 6962 §2.1 SHA-256(0x00‖leaf))
// and appends to out the hashes tlog stores for it, in tlog's order: the
// record hash, then the interior hashes it completes, level by level; they
// are stored from tlog.StoredHashIndex(0, old size) on
// (tlog.StoredHashesForRecordHash computes the same from stored hashes).
func (f *frontier) append(h tlog.Hash, out []tlog.Hash) []tlog.Hash {
	out = append(out, h)
	level := 0
	for f.size>>level&1 == 1 {
		h = tlog.NodeHash(f.node[level], h)
		f.node[level] = tlog.Hash{} // the bit clears: keep unused levels zero
		out = append(out, h)
		level++
	}
	f.node[level] = h
	f.size++
	return out
}

// root returns the RFC 6962 tree hash MTH of the leaves: the right edge's
// subtrees folded from the smallest (rightmost) one, which is
// tlog.TreeHash's result for the same leaves.
func (f *frontier) root() tlog.Hash {
	if f.size == 0 {
		return tlogEmptyRoot()
	}
	var h tlog.Hash
	have := false
	for level := range len(f.node) {
		if f.size>>level&1 == 0 {
			continue
		}
		if !have {
			h, have = f.node[level], true
		} else {
			h = tlog.NodeHash(f.node[level], h)
		}
	}
	return h
}

// frontierIndexes lists the stored-hash indexes of the right edge of a tree
// of size leaves, lowest level first: for each set bit L, the last complete
// level-L node, (size>>L)−1.
func frontierIndexes(size int64) []int64 {
	var idx []int64
	for level := range 63 {
		if size>>level&1 == 1 {
			idx = append(idx, tlog.StoredHashIndex(level, size>>level-1))
		}
	}
	return idx
}

// loadFrontier reads the right edge of a tree of size leaves from stored
// hashes: at most log2(size) reads.
func loadFrontier(size int64, r tlog.HashReader) (frontier, error) {
	f := frontier{size: size}
	if size < 0 {
		return f, fmt.Errorf("tree size %d", size)
	}
	idx := frontierIndexes(size)
	if len(idx) == 0 {
		return f, nil
	}
	hs, err := r.ReadHashes(idx)
	if err != nil {
		return f, err
	}
	i := 0
	for level := range 63 {
		if size>>level&1 == 1 {
			f.node[level] = hs[i]
			i++
		}
	}
	return f, nil
}

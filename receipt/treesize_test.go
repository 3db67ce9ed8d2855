package receipt

import (
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// TestTreeSizes issues receipts of every version into one growing log and,
// at tree sizes 1, 2, each power of two and its neighbours up to 129,
// verifies the receipts at index 0, the middle and the last index, and
// refuses each with its proof moved: to the checkpoint of another tree
// size, to a neighbouring index (and to the tree size itself), cut short
// by its last hash, and lengthened by one (RFC 6962 §2.1.1: a proof is for
// one leaf of one tree).
func TestTreeSizes(t *testing.T) {
	var sizes = map[int64]bool{}
	for _, n := range []int64{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129} {
		sizes[n] = true
	}
	for _, ver := range []string{SpecV1, SpecV2, SpecV3, SpecV4} {
		t.Run(ver, func(t *testing.T) {
			f := newFixture(t)
			f.log.cosigners = []note.Signer{f.signer.NoteSigner()} // 4.0.0: the receipt key cosigns
			v, err := NewVerifier(f.jwks(t), f.log.vkey)
			if err != nil {
				t.Fatal(err)
			}
			type snapshot struct {
				size int64
				cp   []byte
			}
			var leaves [][]byte
			var seen []snapshot
			refuse := func(r []byte, index int64, proof tlog.RecordProof, cp []byte, what string) {
				t.Helper()
				doc := decodeReceipt(t, r)
				doc.TlogProof = FormatTlogProof(index, proof, cp)
				if _, err := v.Verify(encodeReceipt(t, doc)); err == nil {
					t.Errorf("%s: accepted", what)
				}
			}
			for n := 0; n < 129; n++ {
				leaves = append(leaves, f.leaf(t, ver, n))
				f.log.append(t, leaves[n])
				size := f.log.size
				if !sizes[size] {
					continue
				}
				cp := f.log.checkpoint(t)
				for _, i := range []int64{0, size / 2, size - 1} {
					proof := f.log.prove(t, i)
					r, err := Assemble(string(leaves[i]), i, proof, cp)
					if err != nil {
						t.Fatalf("size %d index %d: assemble: %v", size, i, err)
					}
					if got, err := v.Verify(r); err != nil {
						t.Errorf("size %d index %d: genuine receipt refused: %v", size, i, err)
					} else if got.Log.Index != i {
						t.Errorf("size %d index %d: verified index %d", size, i, got.Log.Index)
					}
					for _, o := range seen {
						if i < o.size {
							refuse(r, i, proof, o.cp, fmt.Sprintf("proof of index %d in tree %d against the checkpoint of tree %d", i, size, o.size))
						}
					}
					for _, j := range []int64{i - 1, i + 1, i ^ 1, size} {
						if j >= 0 && j != i {
							refuse(r, j, proof, cp, fmt.Sprintf("tree %d: proof of index %d relabelled %d", size, i, j))
						}
					}
					if len(proof) > 0 {
						refuse(r, i, proof[:len(proof)-1], cp, fmt.Sprintf("tree %d index %d: proof without its last hash", size, i))
					}
					refuse(r, i, append(proof[:len(proof):len(proof)], tlog.Hash{}), cp, fmt.Sprintf("tree %d index %d: proof with one hash more", size, i))
				}
				seen = append(seen, snapshot{size, cp})
			}
		})
	}
}

// leaf is the log leaf of the n-th sample receipt of spec version ver,
// appended next: a JWS (1.0.0 to 3.0.0) or a 4.0.0 payload.
func (f *fixture) leaf(t testing.TB, ver string, n int) []byte {
	t.Helper()
	var c Claims
	switch ver {
	case SpecV1:
		c = sampleClaims(n)
	case SpecV2:
		c = sampleClaimsV2(n)
	case SpecV3:
		c, _ = conceal(t, sampleClaimsV3Clear(n), byte(n))
	case SpecV4:
		c, _ = conceal(t, asV4(sampleClaimsV3Clear(n)), byte(n))
	}
	c.Log = LogRef{Origin: f.log.origin}
	if ver == SpecV1 || ver == SpecV2 {
		c.Log.Index = f.log.size // signed in 1.0.0 and 2.0.0 only
	}
	if ver == SpecV4 {
		p, err := Seal(c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	jws, err := f.signer.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(jws)
}

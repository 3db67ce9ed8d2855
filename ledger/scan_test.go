package ledger

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refScan is the specification of Scan over sorted keys.
func refScan(keys [][]byte, prefix, after []byte, reverse bool, limit int) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if !bytes.HasPrefix(k, prefix) {
			continue
		}
		if len(after) > 0 && (!reverse && bytes.Compare(k, after) <= 0 || reverse && bytes.Compare(k, after) >= 0) {
			continue
		}
		out = append(out, k)
	}
	if reverse {
		slices.Reverse(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func TestScanPostings(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		// Keys embed a big-endian time so that byte order is time order, as
		// the engine's per-account listings do.
		var keys [][]byte
		for i, acct := range []string{"acct1", "acct2", "acct1", "acct1", "acct2", "acct1"} {
			key := append([]byte(acct+"\x00"), u64(int64(1000+i))...)
			keys = append(keys, key)
			_, err := l.Append(context.Background(), Append{Build: func(index int64) (Entry, error) {
				return Entry{ID: fmt.Sprintf("e%d", i), Leaf: []byte{byte(i)}, Postings: []Posting{{Index: "by_account", Key: key}}}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
		ids := func(hits []Hit) []string {
			out := []string{}
			for _, h := range hits {
				out = append(out, h.ID)
			}
			return out
		}
		a1 := []byte("acct1\x00")
		tests := []struct {
			name    string
			prefix  []byte
			after   []byte
			reverse bool
			limit   int
			want    []string
		}{
			{"acct1 oldest first", a1, nil, false, 0, []string{"e0", "e2", "e3", "e5"}},
			{"acct1 newest first", a1, nil, true, 0, []string{"e5", "e3", "e2", "e0"}},
			{"newest first, page 1", a1, nil, true, 2, []string{"e5", "e3"}},
			{"newest first, page 2", a1, keys[3], true, 2, []string{"e2", "e0"}},
			{"oldest first, page 2", a1, keys[2], false, 2, []string{"e3", "e5"}},
			{"after the last", a1, keys[5], false, 0, []string{}},
			{"all", nil, nil, false, 0, []string{"e0", "e2", "e3", "e5", "e1", "e4"}},
			{"all reverse", nil, nil, true, 0, []string{"e4", "e1", "e5", "e3", "e2", "e0"}},
			{"no match", []byte("acct3"), nil, false, 0, []string{}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				hits, err := l.Scan("by_account", tc.prefix, tc.after, tc.reverse, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(hits); !slices.Equal(got, tc.want) {
					t.Errorf("Scan = %v, want %v", got, tc.want)
				}
			})
		}
		if hits, err := l.Scan("never-posted", nil, nil, false, 0); err != nil || len(hits) != 0 {
			t.Errorf("Scan of an unknown index = %v, %v", hits, err)
		}
	})
}

// TestScanMatchesReference compares Tx.Scan with refScan on random keys,
// random prefixes (including 0xff edges), cursors and limits.
func TestScanMatchesReference(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		rng := rand.New(rand.NewPCG(7, 7))
		alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
		randKey := func(minLen int) []byte {
			k := make([]byte, minLen+rng.IntN(4))
			for i := range k {
				k[i] = alphabet[rng.IntN(len(alphabet))]
			}
			return k
		}
		set := map[string]bool{}
		err := l.Update(func(tx Tx) error {
			for range 300 {
				k := randKey(1)
				set[string(k)] = true
				if err := tx.Put("s", k, []byte("v"+string(k))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var keys [][]byte
		for k := range set {
			keys = append(keys, []byte(k))
		}
		slices.SortFunc(keys, bytes.Compare)
		for i := range 2000 {
			prefix := randKey(2)[:rng.IntN(3)]
			var after []byte
			if rng.IntN(2) == 0 {
				after = randKey(0)
			}
			reverse := rng.IntN(2) == 0
			limit := rng.IntN(6)
			want := refScan(keys, prefix, after, reverse, limit)
			var got [][]byte
			err := l.View(func(tx Tx) error {
				return tx.Scan("s", prefix, after, reverse, func(k, v []byte) bool {
					if string(v) != "v"+string(k) {
						t.Errorf("value of %x is %q", k, v)
					}
					got = append(got, bytes.Clone(k))
					return limit <= 0 || len(got) < limit
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("case %d: Scan(prefix %x, after %x, reverse %v, limit %d)\n got %x\nwant %x", i, prefix, after, reverse, limit, got, want)
			}
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{'a', 0xfe}, []byte{'a', 0xff}},
	} {
		if got := prefixEnd(tc.in); !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("prefixEnd(%x) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

package ledger

import (
	"bytes"
	"testing"
)

// TestIDIndexProbesPastCollisions: keys whose hashes collide (all of
// them, here) are all found, each by confirming the candidates in probe
// order; a table that grows while it is used keeps every key; a candidate
// beyond the reader's snapshot is never offered.
func TestIDIndexProbesPastCollisions(t *testing.T) {
	x := newIDIndex(0)
	const same = 0xdeadbeef_00000000
	var refs []keyRef
	for i := range int64(5000) {
		refs = append(refs, keyRef{hash: same ^ uint64(i%3), index: i})
	}
	x.add(refs[:10], 10)
	x.add(refs[10:], 5000) // grows the table past 1,024 slots
	if len(x.slots) < 5000*4/3 || x.n != 5000 || x.upTo != 5000 {
		t.Fatalf("table of %d slots, n %d, upTo %d", len(x.slots), x.n, x.upTo)
	}
	for _, want := range []int64{0, 1, 2, 2999, 4999} {
		var offered []int64
		upTo, found, err := x.find(same^uint64(want%3), 5000, func(at int64) (bool, error) {
			offered = append(offered, at)
			return at == want, nil
		})
		if err != nil || !found || upTo != 5000 || offered[len(offered)-1] != want {
			t.Fatalf("find %d: found %v, upTo %d, %v, offered %v", want, found, upTo, err, offered)
		}
	}
	// Below a snapshot of size 100 only indexes below 100 are offered.
	x.find(same, 100, func(at int64) (bool, error) {
		if at >= 100 {
			t.Fatalf("offered index %d beyond the snapshot", at)
		}
		return false, nil
	})
	// A hash nobody holds offers nothing.
	if _, found, _ := x.find(0x12345678_9abcdef0, 5000, func(int64) (bool, error) {
		t.Fatal("offered a candidate for an absent hash")
		return false, nil
	}); found {
		t.Fatal("found an absent hash")
	}
}

// TestIDIndexLoad: the index Open builds (load: chunks sorted by home
// slot, across a chunk boundary) finds every key loaded.
func TestIDIndexLoad(t *testing.T) {
	x := newIDIndex(10)
	n := int64(3*loadChunk/2 + 7)
	for i := range n {
		if err := x.load(keyRef{x.hashID(string(u64(i))), i}); err != nil {
			t.Fatal(err)
		}
	}
	x.finish()
	for _, i := range []int64{0, 1, loadChunk - 1, loadChunk, n - 1} {
		_, found, _ := x.find(x.hashID(string(u64(i))), n, func(at int64) (bool, error) { return at == i, nil })
		if !found {
			t.Fatalf("key of %d not found", i)
		}
	}
}

// TestKeysRecord: a keys record reads back its ID and claims, a claim named
// twice is recorded once, and a damaged or truncated record is refused.
func TestKeysRecord(t *testing.T) {
	claims := []claimWrite{
		{space: "payment", key: "eip155:8453/0xabc", fingerprint: []byte("fp1")},
		{space: "idem", key: "acct/k1", fingerprint: nil},
		{space: "payment", key: "eip155:8453/0xabc", fingerprint: []byte("fp1")},
	}
	rec := appendKeysRecord([]byte("prefix"), "entry-1", claims)[len("prefix"):]
	if len(rec) > keysRecordSize("entry-1", claims) {
		t.Fatalf("record of %d bytes over its bound %d", len(rec), keysRecordSize("entry-1", claims))
	}
	r, err := parseKeysRecord(rec)
	if err != nil || string(r.id) != "entry-1" || r.n != 2 {
		t.Fatalf("parse = %q %d, %v", r.id, r.n, err)
	}
	if fp, ok := r.claim("payment", "eip155:8453/0xabc"); !ok || string(fp) != "fp1" {
		t.Fatalf("claim payment = %q %v", fp, ok)
	}
	if fp, ok := r.claim("idem", "acct/k1"); !ok || len(fp) != 0 {
		t.Fatalf("claim idem = %q %v", fp, ok)
	}
	if _, ok := r.claim("idem", "eip155:8453/0xabc"); ok {
		t.Fatal("a key found in another space")
	}
	for i := range rec {
		bad := bytes.Clone(rec)
		bad[i] ^= 0x40
		if _, err := parseKeysRecord(bad); err == nil {
			t.Fatalf("byte %d flipped: parsed", i)
		}
	}
	for n := range len(rec) {
		if _, err := parseKeysRecord(rec[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: parsed", n)
		}
	}
}

// FuzzParseKeysRecord: any bytes either parse into a record whose claims
// walk to their count, or are refused; nothing panics.
func FuzzParseKeysRecord(f *testing.F) {
	f.Add(appendKeysRecord(nil, "e1", []claimWrite{{space: "payment", key: "k", fingerprint: []byte("fp")}}))
	f.Add(appendKeysRecord(nil, "e2", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseKeysRecord(b)
		if err != nil {
			return
		}
		n := 0
		r.each(func(space, key, _ []byte) bool {
			if len(space) == 0 || len(key) == 0 {
				t.Fatalf("claim %d with an empty space or key", n)
			}
			n++
			return true
		})
		if n != r.n || len(r.id) == 0 {
			t.Fatalf("walked %d of %d claims, ID %q", n, r.n, r.id)
		}
	})
}

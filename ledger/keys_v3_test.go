package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// putKeys rewrites the keys record of index with an ID and claims.
func putKeys(index int64, id string, claims ...claimWrite) func(*bolt.Tx) error {
	return put("keys", u64(index), appendKeysRecord(nil, id, claims))
}

// flipKeysCRC flips the last bit of the keys record of index at (its CRC).
func flipKeysCRC(at int64) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		rec := clone(tx.Bucket(bucketKeys).Get(u64(at)))
		rec[len(rec)-1] ^= 1
		return tx.Bucket(bucketKeys).Put(u64(at), rec)
	}
}

func payment(key string) claimWrite {
	return claimWrite{space: "payment", key: key, fingerprint: []byte("fp")}
}

// upgradedFixture is the schema-2 fixture upgraded by a writable open, with
// entries f0…f4 appended after it (indexes 10–14), each with the claim
// ("payment", fN) and the posting ("by_name", fN).
func upgradedFixture(t *testing.T) string {
	t.Helper()
	path, v := v2Fixture(t)
	l := reopen(t, path)
	for i := range 5 {
		name := fmt.Sprintf("f%d", i)
		if _, err := l.Append(context.Background(), Append{
			Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
			Build:  simpleEntry(name),
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("upgraded fixture does not check: %v", err)
	}
	return path
}

// TestCheckReportsKeysTampering edits the keys of schema-3 files (a new
// one, and one upgraded from schema 2 whose first entries keep their
// B-tree keys) and checks that Check reports each edit at its index. Open,
// which reads every keys record to build its index, refuses the damage it
// meets (the rows of openRefuses) with Check's index and words, never with another
// damage's name: a record below v3from is not reported as a missing one.
func TestCheckReportsKeysTampering(t *testing.T) {
	fresh, v := tamperFixture(t)
	upgraded := upgradedFixture(t)
	tests := []struct {
		name      string
		base      string
		edit      func(*bolt.Tx) error
		wantIndex int64
		wantWhat  string // "" : Check passes
	}{
		{"duplicated ID", fresh, putKeys(5, "e3", payment("e5")), 5, `entry ID "e3" is held by entries 3 and 5`},
		{"duplicated claim", fresh, putKeys(6, "e6", payment("e2")), 6, `claim "payment" "e2" is held by entries 2 and 6`},
		{"one key in two spaces", fresh, putKeys(6, "e6", payment("e6"), claimWrite{space: "refund", key: "e2"}), 0, ""},
		{"keys record with a bad CRC", fresh, flipKeysCRC(4), 4, "keys record 4: keys record CRC-32C mismatch"},
		{"keys record missing", fresh, del("keys", u64(7)), 7, "keys record 7 is missing"},
		{"keys record missing in an upgraded file", upgraded, del("keys", u64(12)), 12, "keys record 12 is missing"},
		{"keys record beyond the size", fresh, putKeys(10, "x"), 10, "keys record key 000000000000000a beyond meta size 10"},
		{"stray ids key above v3from", fresh, put("ids", []byte("e3"), u64(3)), 3,
			`ids index: ID "e3" points at 3, at or above v3from 0`},
		{"stray claim above v3from", fresh, subPut("claims", "payment", []byte("zz"), claimValue(3, nil)), 3,
			`claim "payment" "zz" points at index 3, at or above v3from 0`},
		{"stray entries key above v3from", fresh, put("entries", u64(2), []byte("e2")), 2,
			"entries key 0000000000000002 at or above v3from 0"},
		{"posting to a missing entry", fresh, subPut("postings", "by_name", []byte("x"), []byte("nobody")), -1,
			`posting "by_name" "x" names entry "nobody", which does not exist`},
		{"ID of a legacy entry again", upgraded, putKeys(12, "e3", payment("f2")), 12, `entry ID "e3" is held by entries 3 and 12`},
		{"claim of a legacy entry again", upgraded, putKeys(12, "f2", payment("e4")), 12, `claim "payment" "e4" is held by entries 4 and 12`},
		{"stray ids key in an upgraded file", upgraded, put("ids", []byte("f1"), u64(11)), 11,
			`ids index: ID "f1" points at 11, at or above v3from 10`},
		{"posting to a legacy entry", upgraded, subPut("postings", "by_name", []byte("x"), []byte("e1")), 0, ""},
		{"keys record below v3from", upgraded, putKeys(3, "x"), 3, "keys record 0000000000000003 below v3from 10"},
	}
	openRefuses := map[string]bool{"keys record with a bad CRC": true, "keys record missing": true,
		"keys record missing in an upgraded file": true, "keys record below v3from": true}
	namesRows(t, "openRefuses", openRefuses, len(tests), func(i int) string { return tests[i].name })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantWhat == "" {
				path := copyFile(t, tc.base)
				tamper(t, path, tc.edit)
				if err := Check(path, v); err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			path := checkTampered(t, tc.base, tc.edit, v, tc.wantIndex, tc.wantWhat)
			if !openRefuses[tc.name] {
				return
			}
			l, err := Open(path, Options{Origin: testOrigin, Verifier: v})
			if err == nil {
				l.Close()
				t.Fatal("Open accepted the damaged file")
			}
			var co *CorruptError
			if !errors.As(err, &co) || co.Index != tc.wantIndex || !strings.Contains(co.Reason, tc.wantWhat) {
				t.Fatalf("Open = %v\nwant a CorruptError at index %d containing %q (Check's words)", err, tc.wantIndex, tc.wantWhat)
			}
		})
	}
}

// TestSchema2FileUpgrades: the schema-2 fixture reads as it is when opened
// read-only, and opened for writing is upgraded in place to schema 3: its
// entries keep their B-tree keys and are found by ID and claim beside the
// new ones, which get keys records; retries, conflicts and duplicates are
// decided across both; it checks, and reopens with the index rebuilt.
func TestSchema2FileUpgrades(t *testing.T) {
	path, v := v2Fixture(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	readsV2(t, ro, 10)
	mustCheck(t, ro)
	ro.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a read-only open changed the file")
	}

	l := reopen(t, path)
	if schema := schemaOf3(t, path, l); schema != schemaVersion {
		t.Fatalf("after a writable open: schema %q", schema)
	}
	readsV2(t, l, 10)
	ctx := context.Background()
	for i := range 5 {
		name := fmt.Sprintf("f%d", i)
		a, err := l.Append(ctx, Append{Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}}, Build: simpleEntry(name)})
		if err != nil || a.Index != int64(10+i) {
			t.Fatalf("append %s = %+v, %v", name, a, err)
		}
	}
	// A retry of a legacy claim answers with its holder; another
	// fingerprint conflicts; a legacy ID is taken.
	a, err := l.Append(ctx, Append{Claims: []Claim{{Space: "payment", Key: "e3", Fingerprint: []byte("fp")}}, Build: simpleEntry("new")})
	if err != nil || !a.Existing || a.Index != 3 || a.ID != "e3" {
		t.Fatalf("retry of a legacy claim = %+v, %v", a, err)
	}
	var conflict *ClaimConflictError
	if _, err := l.Append(ctx, Append{Claims: []Claim{{Space: "payment", Key: "f1", Fingerprint: []byte("other")}}, Build: simpleEntry("new")}); !errors.As(err, &conflict) || conflict.HolderID != "f1" {
		t.Fatalf("conflicting claim = %v", err)
	}
	if _, err := l.Append(ctx, Append{Build: simpleEntry("e2")}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("legacy ID again = %v", err)
	}
	if _, err := l.Append(ctx, Append{Build: simpleEntry("f4")}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("new ID again = %v", err)
	}
	readsV2(t, l, 15)
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("Check after the upgrade: %v", err)
	}
	l = reopen(t, path)
	readsV2(t, l, 15)
	if _, err := l.IndexOf("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("IndexOf(nobody) = %v", err)
	}
	if _, _, err := l.ClaimHolder("payment", "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ClaimHolder(nobody) = %v", err)
	}
}

// schemaOf3 reads the schema through the open ledger's store.
func schemaOf3(t *testing.T, path string, l *Ledger) string {
	t.Helper()
	var schema string
	l.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
		schema = string(tx.Bucket(bucketMeta).Get(metaSchema))
		return nil
	})
	return schema
}

// readsV2 reads the fixture's entries e0…e9, and from index 10 on the
// upgraded entries f0…, by ID, by claim and by posting.
func readsV2(t *testing.T, l *Ledger, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("e%d", i)
		if i >= 10 {
			name = fmt.Sprintf("f%d", i-10)
		}
		if at, err := l.IndexOf(name); err != nil || at != int64(i) {
			t.Fatalf("IndexOf(%s) = %d, %v", name, at, err)
		}
		if e, err := l.Entry(name); err != nil || e.Index != int64(i) || e.ID != name {
			t.Fatalf("Entry(%s) = %+v, %v", name, e, err)
		}
		if e, err := l.EntryAt(int64(i)); err != nil || e.ID != name {
			t.Fatalf("EntryAt(%d) = %+v, %v", i, e, err)
		}
		if id, fp, err := l.ClaimHolder("payment", name); err != nil || id != name || string(fp) != "fp" {
			t.Fatalf("ClaimHolder(%s) = %q %q, %v", name, id, fp, err)
		}
		if id, err := l.Lookup("by_name", []byte(name)); err != nil || id != name {
			t.Fatalf("Lookup(%s) = %q, %v", name, id, err)
		}
	}
}

// TestKeysVisibleOnceAcknowledged: while appends commit, readers asking
// for IDs and claims find an entry from the moment its Append returned,
// and an index they find holds that entry (go test -race runs the
// in-memory index's readers against the committer).
func TestKeysVisibleOnceAcknowledged(t *testing.T) {
	l, _, _ := testLedger(t)
	const n = 200
	var acked sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for r := range 3 {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("n%d", (k*7+r)%n)
				_, wasAcked := acked.Load(name)
				at, err := l.IndexOf(name)
				id, _, cerr := l.ClaimHolder("payment", name)
				switch {
				case wasAcked && (err != nil || cerr != nil || id != name):
					errs <- fmt.Errorf("acknowledged %s: IndexOf %d, %v; ClaimHolder %q, %v", name, at, err, id, cerr)
					return
				case err == nil:
					// Found: the position must hold this entry, already
					// readable (committed), whether or not acknowledged.
					if e, eerr := l.EntryAt(at); eerr != nil || e.ID != name {
						errs <- fmt.Errorf("IndexOf(%s) = %d, which holds %q, %v", name, at, e.ID, eerr)
						return
					}
				}
			}
		})
	}
	var appenders sync.WaitGroup
	for w := range 4 {
		appenders.Go(func() {
			for i := w; i < n; i += 4 {
				name := fmt.Sprintf("n%d", i)
				if _, err := l.Append(context.Background(), Append{
					Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
					Build:  simpleEntry(name),
				}); err != nil {
					errs <- err
					return
				}
				acked.Store(name, true)
			}
		})
	}
	appenders.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustCheck(t, l)
}

// TestClaimHolderFreeFromIndex: on the writer's ledger a free claim is
// answered from the in-memory index without a read transaction (bbolt
// counts none), a held one is still confirmed in the file, and a claim is
// found from the moment its Append returned (TestKeysVisibleOnceAcknowledged
// races readers against the committer).
func TestClaimHolderFreeFromIndex(t *testing.T) {
	l, _, _ := testLedger(t)
	ctx := context.Background()
	for i := range 20 {
		name := fmt.Sprintf("h%d", i)
		if _, err := l.Append(ctx, Append{Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp" + name)}}, Build: simpleEntry(name)}); err != nil {
			t.Fatal(err)
		}
	}
	db := l.store.(*boltStore).db
	before := db.Stats().TxN
	for i := range 500 {
		if _, _, err := l.ClaimHolder("payment", fmt.Sprintf("free%d", i)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("ClaimHolder(free%d) = %v, want ErrNotFound", i, err)
		}
		// The same key in another space is another claim.
		if _, _, err := l.ClaimHolder("other", fmt.Sprintf("h%d", i%20)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("ClaimHolder(other, h%d) = %v, want ErrNotFound", i%20, err)
		}
	}
	if n := db.Stats().TxN - before; n > 2 { // a 32-bit hash prefix shared by chance sends a lookup to the file
		t.Errorf("1,000 lookups of free claims began %d read transactions, want none", n)
	}
	before = db.Stats().TxN
	for i := range 20 {
		name := fmt.Sprintf("h%d", i)
		if id, fp, err := l.ClaimHolder("payment", name); err != nil || id != name || string(fp) != "fp"+name {
			t.Fatalf("ClaimHolder(%s) = %q %q, %v", name, id, fp, err)
		}
	}
	if n := db.Stats().TxN - before; n != 20 {
		t.Errorf("20 lookups of held claims began %d read transactions, want 20 (each confirmed in the file)", n)
	}
}

// TestRepeatedClaimKeepsLastFingerprint: a claim one append names twice is
// held with the fingerprint it was named with last, in the batch and once
// committed, so that a retry with that fingerprint is the same append
// (Existing) before and after the commit and after a reopen.
func TestRepeatedClaimKeepsLastFingerprint(t *testing.T) {
	l, path, _ := testLedger(t)
	ctx := context.Background()
	claims := []Claim{{Space: "payment", Key: "k", Fingerprint: []byte("fp1")}, {Space: "payment", Key: "k", Fingerprint: []byte("fp2")}}
	if _, err := l.Append(ctx, Append{Claims: claims, Build: simpleEntry("twice")}); err != nil {
		t.Fatal(err)
	}
	check := func(l *Ledger) {
		t.Helper()
		if id, fp, err := l.ClaimHolder("payment", "k"); err != nil || id != "twice" || string(fp) != "fp2" {
			t.Fatalf("ClaimHolder = %q %q, %v; want twice, fp2", id, fp, err)
		}
		res, err := l.Append(ctx, Append{Claims: []Claim{{Space: "payment", Key: "k", Fingerprint: []byte("fp2")}}, Build: simpleEntry("again")})
		if err != nil || !res.Existing || res.ID != "twice" {
			t.Fatalf("retry with the last fingerprint = %+v, %v; want the existing entry", res, err)
		}
	}
	check(l)
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = reopen(t, path)
	check(l)
}

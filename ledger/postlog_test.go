package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// postLogCount counts the records of a file's posting log and of its
// index buckets.
func postLogCount(t *testing.T, path string) (logged, indexed int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		logged = tx.Bucket(bucketPostLog).Stats().KeyN
		forEachSub(tx.Bucket(bucketPostings), "postings", func(_, _, _ []byte) error { indexed++; return nil })
		return nil
	})
	return logged, indexed
}

// refPostings is what the postings should be: index → key → entry ID.
type refPostings map[string]map[string]string

func (r refPostings) scan(index string, prefix, after []byte, reverse bool, limit int) []Hit {
	var keys []string
	for k := range r[index] {
		if !strings.HasPrefix(k, string(prefix)) {
			continue
		}
		if len(after) > 0 && (!reverse && k <= string(after) || reverse && k >= string(after)) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if reverse {
		slices.Reverse(keys)
	}
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	hits := []Hit{}
	for _, k := range keys {
		hits = append(hits, Hit{Key: []byte(k), ID: r[index][k]})
	}
	return hits
}

// comparePostings checks every lookup and a spread of scans of l against
// ref.
func comparePostings(t *testing.T, l *Ledger, ref refPostings, rng *rand.Rand) {
	t.Helper()
	for index, keys := range ref {
		all := make([]string, 0, len(keys))
		for k, id := range keys {
			got, err := l.Lookup(index, []byte(k))
			if err != nil || got != id {
				t.Fatalf("Lookup(%q, %q) = %q, %v; want %q", index, k, got, err, id)
			}
			all = append(all, k)
		}
		if _, err := l.Lookup(index, []byte("no such key")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Lookup of a missing key: %v, want ErrNotFound", err)
		}
		slices.Sort(all)
		prefixes := [][]byte{nil, []byte("acct1\x00"), []byte("acct3\x00"), []byte("nobody")}
		afters := [][]byte{nil, []byte("acct2"), []byte("acct2\xff")}
		if len(all) > 0 {
			afters = append(afters, []byte(all[rng.IntN(len(all))]), []byte(all[rng.IntN(len(all))]+"\x00"))
		}
		for _, prefix := range prefixes {
			for _, after := range afters {
				for _, reverse := range []bool{false, true} {
					for _, limit := range []int{0, 3} {
						got, err := l.Scan(index, prefix, after, reverse, limit)
						if err != nil {
							t.Fatal(err)
						}
						want := ref.scan(index, prefix, after, reverse, limit)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("Scan(%q, %q, %q, reverse %v, limit %d):\n got %q\nwant %q", index, prefix, after, reverse, limit, got, want)
						}
					}
				}
			}
		}
	}
}

// TestPostLogReadsMerge appends entries posting to several accounts, in
// group commits, with the posting log moved into the index buckets every
// few commits, and checks after every round that lookups and scans see
// exactly the postings made, whether they are in the log, in the buckets
// or both; then again after a reopen (the log loaded from the file), and
// that Check passes.
func TestPostLogReadsMerge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	l.store.(*boltStore).flushAt = 23
	ref := refPostings{"events": {}, "time": {}}
	rng := rand.New(rand.NewPCG(7, 22))
	var mu sync.Mutex
	sawLog, sawMoved, logged := false, false, 0
	n := 0
	for range 12 {
		var wg sync.WaitGroup
		for range 1 + rng.IntN(9) {
			n++
			id, acct, stamp := fmt.Sprintf("e%d", n), fmt.Sprintf("acct%d\x00", rng.IntN(5)), fmt.Sprintf("%08d", rng.IntN(1e8))
			wg.Go(func() {
				a, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
					return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{
						{Index: "events", Key: []byte(acct), AppendIndex: true},
						{Index: "time", Key: []byte(acct + stamp + id)},
					}}, nil
				}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ref["events"][acct+string(binary.BigEndian.AppendUint64(nil, uint64(a.Index)))] = id
				ref["time"][acct+stamp+id] = id
				mu.Unlock()
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		comparePostings(t, l, ref, rng)
		p := l.store.(*boltStore).pend.Load()
		// The log only grows between moves: a smaller one was moved.
		sawLog, sawMoved, logged = sawLog || p.n > 0, sawMoved || p.n < logged, p.n
	}
	if !sawLog || !sawMoved {
		t.Fatalf("the rounds never had postings in the log (%v) or never moved them (%v)", sawLog, sawMoved)
	}
	// Leave some in the log (one more commit if the last one moved it),
	// then read them back from the file.
	if l.store.(*boltStore).pend.Load().n == 0 {
		n++
		id := fmt.Sprintf("e%d", n)
		if _, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{{Index: "time", Key: []byte("acct0\x00last")}, {Index: "time", Key: []byte("acct0\x00last2")}}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
		ref["time"]["acct0\x00last"], ref["time"]["acct0\x00last2"] = id, id
	}
	if l.store.(*boltStore).pend.Load().n == 0 {
		t.Fatal("the log is empty at the end: the reopen below would not read it")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logged, indexed := postLogCount(t, path)
	if logged == 0 || indexed == 0 || logged+indexed != 2*n {
		t.Fatalf("file: %d postings in the log, %d in the index buckets, want both > 0 and %d in all", logged, indexed, 2*n)
	}
	_, v, _ := testKey(t, testOrigin, "log key 1")
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
	l = reopen(t, path)
	comparePostings(t, l, ref, rng)
	// A duplicate of a posting still in the log is refused.
	var dupKey string
	for k := range ref["time"] {
		if _, ok := l.store.(*boltStore).pend.Load().get("time", []byte(k)); ok {
			dupKey = k
			break
		}
	}
	if dupKey == "" {
		t.Fatal("no time posting in the log after the reopen")
	}
	_, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
		return Entry{ID: "dup", Leaf: []byte("dup"), Postings: []Posting{{Index: "time", Key: []byte(dupKey)}}}, nil
	}})
	if !errors.Is(err, ErrDuplicate) {
		t.Fatalf("posting %q again: %v, want ErrDuplicate", dupKey, err)
	}
}

// TestPostLogConcurrentReaders scans an index while commits add to it and
// move the log into the index bucket: every snapshot must see exactly the
// postings of its entries (a reader that took another commit's log would
// see postings of entries it does not hold, or miss those just moved).
// Entry n posts to account "a" when n is even, else to "b": "b" sorts
// last, so its postings go to the bucket at once and "a"'s behind.
func TestPostLogConcurrentReaders(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	l.store.(*boltStore).flushAt = 10
	account := func(index int64) string { return string(rune('a' + index%2)) }
	var done atomic.Bool
	var scans atomic.Int64
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			acct, reverse := account(int64(r)), r/2 == 1
			for !done.Load() {
				var hits []Hit
				var size int64
				err := l.store.view(func(rd storeReader) error {
					size = rd.size()
					return rd.scan("events", []byte(acct+"\x00"), nil, reverse, func(k []byte, id string) bool {
						hits = append(hits, Hit{Key: clone(k), ID: id})
						return true
					})
				})
				if err != nil {
					t.Error(err)
					return
				}
				if reverse {
					slices.Reverse(hits)
				}
				want := (size + 1 - int64(r%2)) / 2 // the even or the odd indexes below size
				if int64(len(hits)) != want {
					t.Errorf("a snapshot of %d entries scans %d postings of %q, want %d", size, len(hits), acct, want)
					return
				}
				for i, h := range hits {
					if at := int64(binary.BigEndian.Uint64(h.Key[2:])); at != 2*int64(i)+int64(r%2) || h.ID != fmt.Sprintf("e%d", at) {
						t.Errorf("scan of %d postings of %q: posting %d is %x → %q", len(hits), acct, i, h.Key, h.ID)
						return
					}
				}
				scans.Add(1)
			}
		})
	}
	var writers sync.WaitGroup
	for range 8 {
		writers.Go(func() {
			for range 40 {
				_, err := l.Append(context.Background(), Append{Build: func(index int64) (Entry, error) {
					id := fmt.Sprintf("e%d", index)
					return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{{Index: "events", Key: []byte(account(index) + "\x00"), AppendIndex: true}}}, nil
				}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	writers.Wait()
	done.Store(true)
	wg.Wait()
	hits, err := l.Scan("events", nil, nil, false, 0)
	if err != nil || len(hits) != 320 {
		t.Fatalf("final scan: %d postings, %v; want 320", len(hits), err)
	}
	if scans.Load() == 0 {
		t.Fatal("no scan ran during the commits")
	}
}

// TestCheckReportsPostLogTampering edits the posting log of a closed file
// and checks that Check reports each inconsistency, and that Open refuses
// a log that does not parse.
func TestCheckReportsPostLogTampering(t *testing.T) {
	// Ten entries e0…e9; eN posts by_name/k(9−N): each key precedes the
	// ones before it, so all but e0's (the bucket was empty) go behind.
	base := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, base)
	for i := range 10 {
		id, key := fmt.Sprintf("e%d", i), fmt.Sprintf("k%d", 9-i)
		if _, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{{Index: "by_name", Key: []byte(key)}}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	_, v, _ := testKey(t, testOrigin, "log key 1")
	if err := Check(base, v); err != nil {
		t.Fatal(err)
	}
	if logged, indexed := postLogCount(t, base); logged != 9 || indexed != 1 {
		t.Fatalf("fixture: %d postings in the log and %d in the bucket, want 9 and 1", logged, indexed)
	}
	logPut := func(at int64, ord int, index, key, id string) func(*bolt.Tx) error {
		return put("postlog", appendPostLogKey(nil, at, ord), appendPostLogValue(nil, postingWrite{index: index, key: []byte(key), id: id}))
	}
	tests := []struct {
		name      string
		edit      func(*bolt.Tx) error
		wantIndex int64
		wantWhat  string
	}{
		{"names another entry", logPut(4, 0, "by_name", "k5", "e5"), 4, `posting log: posting "by_name" "k5" names entry "e5", but entry 4 is "e4"`},
		{"beyond the log", logPut(10, 0, "by_name", "x", "e9"), 10, "beyond meta size 10"},
		{"given twice", logPut(6, 1, "by_name", "k3", "e6"), 6, `posting log: posting "by_name" "k3" is given twice`},
		{"also in its index bucket", subPut("postings", "by_name", []byte("k6"), []byte("e3")), 3, `posting log: posting "by_name" "k6" is also in its index bucket`},
		{"key malformed", put("postlog", []byte("short"), []byte("x")), -1, "posting log key 73686f7274: want 12 bytes"},
		{"value malformed", put("postlog", appendPostLogKey(nil, 2, 0), []byte{9, 'x'}), -1, "does not parse"},
		{"bucket dropped", func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketPostLog) }, -1, `bucket "postlog" is missing`},
		{"schema 3 with a posting log", put("meta", metaSchema, []byte(schemaV3)), -1, `bucket "postlog" in a schema-3 file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkTampered(t, base, tc.edit, v, tc.wantIndex, tc.wantWhat)
		})
	}
	t.Run("open refuses a log that does not parse", func(t *testing.T) {
		path := copyFile(t, base)
		tamper(t, path, put("postlog", appendPostLogKey(nil, 2, 0), []byte{9, 'x'}))
		s, _, _ := testKey(t, testOrigin, "log key 1")
		l, err := Open(path, Options{Origin: testOrigin, Signer: s})
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(ce.Error(), "does not parse") {
			if l != nil {
				l.Close()
			}
			t.Fatalf("Open = %v, want a *CorruptError saying the log does not parse", err)
		}
	})
}

// TestPostLogUpgradesSchema3 turns a file into the schema-3 form (no
// posting log, schema 3 in meta), which this version reads as it is and
// upgrades when it opens it for writing.
func TestPostLogUpgradesSchema3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	l.store.(*boltStore).flushAt = 1 // every commit moves: the log stays empty
	for i := range 5 {
		id := fmt.Sprintf("e%d", i)
		if _, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{{Index: "by_name", Key: []byte(id)}}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	tamper(t, path, func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketPostLog).Stats().KeyN; n != 0 {
			return fmt.Errorf("%d postings in the log", n)
		}
		if err := tx.DeleteBucket(bucketPostLog); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, []byte(schemaV3))
	})
	_, v, _ := testKey(t, testOrigin, "log key 1")
	if err := Check(path, v); err != nil {
		t.Fatalf("schema-3 file: %v", err)
	}
	ro, err := Open(path, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ro.Lookup("by_name", []byte("e3")); err != nil || id != "e3" {
		t.Fatalf("read-only schema 3: Lookup = %q, %v", id, err)
	}
	ro.Close()
	if schema, _ := schemaOf(t, path); schema != schemaV3 {
		t.Fatalf("a read-only open changed the schema to %q", schema)
	}
	l = reopen(t, path)
	if schema := schemaOf3(t, path, l); schema != schemaVersion {
		t.Fatalf("schema after a writable open: %q, want %q", schema, schemaVersion)
	}
	if _, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
		return Entry{ID: "e5", Leaf: []byte("e5"), Postings: []Posting{{Index: "by_name", Key: []byte("e5")}}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	hits, err := l.Scan("by_name", nil, nil, false, 0)
	if err != nil || len(hits) != 6 || !bytes.Equal(hits[5].Key, []byte("e5")) {
		t.Fatalf("Scan after the upgrade = %q, %v", hits, err)
	}
	l.Close()
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
}

// TestPostLogFailedCommit makes a commit fail the way a full disk does
// and checks that the posting log the committer builds on is the one
// before it: the failed batch's postings are neither found nor refused as
// duplicates afterwards.
func TestPostLogFailedCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	post := func(l *Ledger, id string, doc []byte) error {
		_, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: id, Leaf: []byte(id), Docs: map[string][]byte{"d": doc}, Postings: []Posting{{Index: "by_name", Key: []byte("k-" + id)}}}, nil
		}})
		return err
	}
	if err := post(l, "before", nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := testKey(t, testOrigin, "log key 1")
	capped, err := open(path, Options{Origin: testOrigin, Signer: s}, func(o *bolt.Options) { o.MaxSize = int(fi.Size()) })
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	before := capped.store.(*boltStore).pend.Load()
	big := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{2}).Read(big)
	if err := post(capped, "big", big); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append on a full file: %v, want ErrUnavailable", err)
	}
	if after := capped.store.(*boltStore).pend.Load(); after != before {
		t.Fatalf("the posting log after a failed commit holds %d postings (last %x), before %d (last %x)", after.n, after.last, before.n, before.last)
	}
	if _, err := capped.Lookup("by_name", []byte("k-big")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("posting of the failed append: %v, want ErrNotFound", err)
	}
	if id, err := capped.Lookup("by_name", []byte("k-before")); err != nil || id != "before" {
		t.Fatalf("posting of the committed append: %q, %v", id, err)
	}
}

// TestPostLogStoresDoNotShare keeps a read transaction of ledger B open
// while B and then A, another ledger of the same process, move their logs
// with equal last keys: B's reader must still see B's postings (an empty
// set shared by all stores once linked one store's chain to another's).
func TestPostLogStoresDoNotShare(t *testing.T) {
	dir := t.TempDir()
	openSmall := func(name string) *Ledger {
		s, _, _ := testKey(t, testOrigin, "log key 1")
		// A large first mmap: a commit must not wait to remap for the
		// read transaction held below.
		l, err := open(filepath.Join(dir, name), Options{Origin: testOrigin, Signer: s}, func(o *bolt.Options) { o.InitialMmapSize = 1 << 24 })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		l.store.(*boltStore).flushAt = 2
		return l
	}
	post := func(l *Ledger, id, key string) {
		t.Helper()
		if _, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: id, Leaf: []byte(id), Postings: []Posting{{Index: "by_name", Key: []byte(key)}}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := openSmall("a.db"), openSmall("b.db")
	post(a, "A0", "z")
	post(a, "A1", "a1") // behind: log key (1, 0)
	post(b, "B0", "z")
	post(b, "B1", "b1") // behind: log key (1, 0)
	bs := b.store.(*boltStore)
	tx, err := bs.db.Begin(false) // B's log is {b1}
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	post(b, "B2", "b0") // B moves its log
	post(a, "A2", "a0") // A moves its log, which also ended at (1, 0)
	r := boltReader{s: bs, tx: tx}
	var got []string
	if err := r.scan("by_name", nil, nil, false, func(k []byte, id string) bool {
		got = append(got, string(k)+"="+id)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[b1=B1 z=B0]" {
		t.Fatalf("B's reader scans %v, want [b1=B1 z=B0]", got)
	}
	if id, ok, err := r.posting("by_name", []byte("b1")); err != nil || !ok || id != "B1" {
		t.Fatalf("B's reader: posting b1 = %q, %v, %v", id, ok, err)
	}
}

package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// openPG opens the PostgreSQL log at url with the test key.
func openPG(t testing.TB, url string, mutate ...func(*Options)) *Ledger {
	t.Helper()
	s, _, _ := testKey(t, testOrigin, "log key 1")
	opts := Options{Origin: testOrigin, Signer: s}
	for _, m := range mutate {
		m(&opts)
	}
	l, err := OpenPostgres(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Several writers on one log: every append lands exactly once, the claims
// hold across writers, every checkpoint any writer signed is consistent
// with the final tree, and Check passes.
func TestPostgresManyWriters(t *testing.T) {
	url := pgtest.Schema(t)
	const writers, per = 3, 40
	ls := make([]*Ledger, writers)
	for i := range ls {
		ls[i] = openPG(t, url)
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	var cps []Checkpoint
	var wg sync.WaitGroup
	errs := make(chan error, writers*per*2)
	for w := range writers {
		for c := range 4 {
			wg.Go(func() {
				for i := range per / 4 {
					name := fmt.Sprintf("w%d-c%d-%d", w, c, i)
					a, err := ls[w].Append(context.Background(), Append{
						Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
						Build:  simpleEntry(name),
					})
					if err != nil {
						errs <- err
						return
					}
					// The same claim through another writer answers the holder.
					b, err := ls[(w+1)%writers].Append(context.Background(), Append{
						Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
						Build:  simpleEntry(name + "-dup"),
					})
					if err != nil || !b.Existing || b.Index != a.Index {
						errs <- fmt.Errorf("replayed claim %s: %+v %v, want index %d", name, b, err, a.Index)
						return
					}
					cp, err := ls[w].Checkpoint()
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if prev, dup := seen[a.Index]; dup {
						errs <- fmt.Errorf("index %d given to %s and %s", a.Index, prev, name)
					}
					seen[a.Index] = name
					cps = append(cps, cp)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l := ls[0]
	if n := l.Size(); n != writers*per || len(seen) != writers*per {
		t.Fatalf("size %d, %d distinct indexes, want %d", n, len(seen), writers*per)
	}
	final, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		p, err := l.ConsistencyProof(cp.Size, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(p, final.Size, final.Root, cp.Size, cp.Root); err != nil {
			t.Fatalf("checkpoint %d is not consistent with %d: %v", cp.Size, final.Size, err)
		}
	}
	for i, name := range seen {
		e, err := ls[2].EntryAt(i)
		if err != nil || e.ID != name {
			t.Fatalf("entry %d: %v %v, want %s", i, e.ID, err, name)
		}
	}
	for _, l := range ls {
		mustCheck(t, l)
	}
}

// A group commit of prebuilt entries (the form the engine uses) is one
// transaction of two round trips, whatever its claims, postings, side
// reads and sequences. The commit that cuts a zstd/S2 dictionary (the log
// reaching dictCuts) also reads the newest older entries, one round trip
// each; the log is filled past the first cut first, and the measured
// appends stay below the next, so that every measured commit is an
// ordinary one (which commit crosses a cut, and how many of the sources
// it holds itself, depends on how the callers' appends were batched).
func TestPostgresTwoRoundTripsPerCommit(t *testing.T) {
	l := openPG(t, pgtest.Schema(t))
	for i := range dictCuts[0] {
		mustAppend(t, l, fmt.Sprintf("fill-%d", i))
	}
	if dictCuts[1] < dictCuts[0]+160 {
		t.Fatalf("the measured appends would reach the dictionary cut at %d", dictCuts[1])
	}
	before := l.Stats()
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			for i := range 10 {
				name := fmt.Sprintf("c%d-%d", c, i)
				e := Entry{ID: name, Leaf: []byte("leaf " + name), Docs: map[string][]byte{"d": []byte(name)},
					Postings: []Posting{{Index: "by", Key: []byte(name)}, {Index: "acct", Key: []byte("a"), AppendIndex: true}},
					Puts:     []Put{{Bucket: "outbox", Key: []byte(name), Value: []byte("x")}}}
				_, err := l.Append(context.Background(), Append{
					Claims: []Claim{{Space: "payment", Key: name}}, Entry: &e,
					Reads: []SideKey{{Bucket: "totals", Key: []byte("t")}}, Sequences: []string{"inv"},
					Hook: func(h *Hook) error {
						if _, err := h.Sequence("inv"); err != nil {
							return err
						}
						v, err := h.Get("totals", []byte("t"))
						if err != nil {
							return err
						}
						return h.Put("totals", []byte("t"), append(v, 'x'))
					},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := l.Stats()
	st.Appended -= before.Appended
	st.Commits -= before.Commits
	st.RoundTrips -= before.RoundTrips
	t.Logf("%d appends in %d commits, %d round trips", st.Appended, st.Commits, st.RoundTrips)
	if st.Appended != 160 || st.RoundTrips != 2*st.Commits {
		t.Fatalf("%d appends, %d round trips for %d commits, want 160 and 2 per commit", st.Appended, st.RoundTrips, st.Commits)
	}
	if n, _ := l.Sequence("inv"); n != 160 {
		t.Fatalf("sequence %d, want 160", n)
	}
	mustCheck(t, l)
}

// A replica whose log key or pinned keys differ from the log's is refused.
func TestPostgresKeysMustMatch(t *testing.T) {
	url := pgtest.Schema(t)
	openPG(t, url, func(o *Options) { o.Keys = map[string]string{"receipt": "kid-1"} })
	s2, _, _ := testKey(t, testOrigin, "another log key")
	_, err := OpenPostgres(context.Background(), url, Options{Origin: testOrigin, Signer: s2})
	if !errors.Is(err, ErrLogKeyMismatch) {
		t.Fatalf("other log key: %v, want ErrLogKeyMismatch", err)
	}
	s, _, _ := testKey(t, testOrigin, "log key 1")
	_, err = OpenPostgres(context.Background(), url, Options{Origin: testOrigin, Signer: s, Keys: map[string]string{"receipt": "kid-2"}})
	if !errors.Is(err, ErrLogKeyMismatch) {
		t.Fatalf("other receipt key: %v, want ErrLogKeyMismatch", err)
	}
	_, err = OpenPostgres(context.Background(), url, Options{Origin: "other.test/log", Signer: mustSigner(t, "other.test/log")})
	if !errors.Is(err, ErrOriginMismatch) {
		t.Fatalf("other origin: %v, want ErrOriginMismatch", err)
	}
	openPG(t, url, func(o *Options) { o.Keys = map[string]string{"receipt": "kid-1"} })
}

func mustSigner(t *testing.T, origin string) note.Signer {
	s, _, _ := testKey(t, origin, "x")
	return s
}

// A lease is held by one holder at a time and passes on when it expires.
func TestPostgresLease(t *testing.T) {
	url := pgtest.Schema(t)
	a, b := openPG(t, url), openPG(t, url)
	if ok, err := a.lease("queue", "a", 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	if ok, err := b.lease("queue", "b", time.Second); ok || err != nil {
		t.Fatalf("b took a held lease: %v %v", ok, err)
	}
	if ok, _ := a.lease("queue", "a", 300*time.Millisecond); !ok {
		t.Fatal("a could not renew")
	}
	time.Sleep(400 * time.Millisecond)
	if ok, err := b.lease("queue", "b", time.Second); !ok || err != nil {
		t.Fatalf("b after expiry: %v %v", ok, err)
	}
	if ok, _ := a.lease("queue", "a", time.Second); ok {
		t.Fatal("a took b's lease")
	}
	if err := b.releaseLease("queue", "b"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.lease("queue", "a", time.Second); !ok {
		t.Fatal("a could not take a released lease")
	}
}

// Side-data updates of two writers are serialized like bbolt's single
// writer: concurrent read-modify-writes lose nothing.
func TestPostgresUpdatesSerialize(t *testing.T) {
	url := pgtest.Schema(t)
	a, b := openPG(t, url), openPG(t, url)
	var wg sync.WaitGroup
	for _, l := range []*Ledger{a, b, a, b} {
		wg.Go(func() {
			for range 25 {
				err := l.Update(func(tx Tx) error {
					var n int
					if v := tx.Get("counter", []byte("n")); v != nil {
						fmt.Sscan(string(v), &n)
					}
					return tx.Put("counter", []byte("n"), []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	v, err := b.Get("counter", []byte("n"))
	if err != nil || string(v) != "100" {
		t.Fatalf("counter %q %v, want 100", v, err)
	}
}

// A bbolt ledger copied into PostgreSQL ends at the same checkpoint, checks,
// answers the same claims and reads, and goes on appending.
func TestCopyToPostgres(t *testing.T) {
	url := pgtest.Schema(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, v, _ := testKey(t, testOrigin, "log key 1")
	src, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	// The last ten post keys below the bucket's last one: they stay in the
	// posting log (schema 4), which the copy must carry too.
	for i := range 300 {
		name := fmt.Sprintf("e%03d", i)
		if i >= 290 {
			name = fmt.Sprintf("d%03d", i)
		}
		mustAppend(t, src, name)
	}
	if err := src.Update(func(tx Tx) error { return tx.Put("queue", []byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	want, _ := src.Checkpoint()
	src.Close()
	if logged, indexed := postLogCount(t, path); logged != 10 || indexed != 290 {
		t.Fatalf("source: %d postings in the log, %d in the buckets; want 10 and 290", logged, indexed)
	}
	rep, err := CopyToPostgres(context.Background(), path, url, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != 300 || rep.Copy.Size != 300 || rep.Copy.Root != want.Root || rep.Claims != 300 || rep.Postings != 300 || rep.Side < 1 {
		t.Fatalf("report %+v, want 300 entries at root %s", rep, want.Root)
	}
	// Copying again into the now non-empty log is refused.
	if _, err := CopyToPostgres(context.Background(), path, url, Options{Origin: testOrigin, Verifier: v}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("second copy: %v, want ErrInvalid", err)
	}
	l := openPG(t, url)
	if a := mustAppend(t, l, "e007"); !a.Existing || a.Index != 7 {
		t.Fatalf("claim after the copy: %+v", a)
	}
	if a := mustAppend(t, l, "new"); a.Existing || a.Index != 300 {
		t.Fatalf("append after the copy: %+v", a)
	}
	if got, _ := l.Get("queue", []byte("k")); string(got) != "v" {
		t.Fatalf("side value %q", got)
	}
	for _, name := range []string{"e123", "d295"} {
		if id, err := l.Lookup("by_name", []byte(name)); err != nil || id != name {
			t.Fatalf("posting %s: %q %v", name, id, err)
		}
	}
	p, err := l.ConsistencyProof(300, 301)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := l.Checkpoint()
	if err := tlog.CheckTree(p, 301, now.Root, 300, want.Root); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, l)
}

// Check on PostgreSQL finds what was changed behind the ledger's back: a
// blob, a stored hash, a checkpoint, a missing entry, a claim beyond the
// log, a posting naming no entry.
func TestPostgresCheckFindsTampering(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		want      string
	}{
		{"blob", "UPDATE entries SET blob = (SELECT blob FROM entries WHERE idx = 3) WHERE idx = 5", "index 5"},
		{"hash", "UPDATE hashes SET hash = decode(repeat('00', 32), 'hex') WHERE idx = 7", "stored hash"},
		{"checkpoint", "UPDATE checkpoints SET note = (SELECT note FROM checkpoints WHERE size = 2) WHERE size = 4", "checkpoint"},
		{"entry", "DELETE FROM entries WHERE idx = 9", "leaf 9 is missing"},
		{"claim", "UPDATE claims SET idx = 99 WHERE key = 'e001'", "beyond the log size"},
		{"posting", "UPDATE postings SET id = 'nobody' WHERE key = 'e002'", "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.Schema(t)
			l := openPG(t, url, func(o *Options) { o.MaxBatch = 1 })
			for i := range 12 {
				mustAppend(t, l, fmt.Sprintf("e%03d", i))
			}
			mustCheck(t, l)
			db, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close(context.Background())
			if _, err := db.Exec(context.Background(), tc.sql); err != nil {
				t.Fatal(err)
			}
			err = l.Check()
			var ce *CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want a *CheckError about %q", err, tc.want)
			}
			_, v, _ := testKey(t, testOrigin, "log key 1")
			if err := Check(url, v); err == nil {
				t.Fatal("package Check on the URL passed")
			}
		})
	}
}

// A database connection that dies fails the batch it carried with
// ErrUnavailable (never a claim conflict, never "not found"), writes
// nothing of it, and the ledger goes on once the database answers again.
func TestPostgresConnectionLoss(t *testing.T) {
	url := pgtest.Schema(t) + "&application_name=ledger_conn_loss_" + fmt.Sprint(time.Now().UnixNano())
	app := url[strings.Index(url, "application_name=")+len("application_name="):]
	l := openPG(t, url)
	mustAppend(t, l, "a")
	db, err := pgx.Connect(context.Background(), pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(context.Background(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", app); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := range 10 {
		name := fmt.Sprintf("b%d", i)
		_, err := l.Append(context.Background(), Append{Claims: []Claim{{Space: "payment", Key: name}}, Build: simpleEntry(name)})
		switch {
		case err == nil:
		case errors.Is(err, ErrUnavailable):
			failed++
			var cc *ClaimConflictError
			if errors.As(err, &cc) {
				t.Fatalf("a lost connection reported as a claim conflict: %v", err)
			}
			// Nothing of it was written: the claim is free.
			if _, _, err := l.ClaimHolder("payment", name); !errors.Is(err, ErrNotFound) {
				t.Fatalf("claim %s after a failed append: %v", name, err)
			}
		default:
			t.Fatalf("append %s: %v, want nil or ErrUnavailable", name, err)
		}
	}
	if failed == 0 || failed == 10 {
		t.Fatalf("%d of 10 appends failed after the connections were killed, want some, then recovery", failed)
	}
	mustCheck(t, l)
}

// A dictionary one writer cuts is found by another: entries compressed
// with it read back on every writer, the next cut continues the numbering,
// and Check passes on both.
func TestPostgresDictionariesAcrossWriters(t *testing.T) {
	url := pgtest.Schema(t)
	a, b := openPG(t, url), openPG(t, url)
	appendN := func(l *Ledger, prefix string, n int) {
		for i := range n {
			name := fmt.Sprintf("%s%03d", prefix, i)
			doc := []byte(fmt.Sprintf(`{"record":"%s","text":"the same words again and again, the same words again and again"}`, name))
			if _, err := l.Append(context.Background(), Append{Entry: &Entry{ID: name, Leaf: []byte("leaf " + name), Docs: map[string][]byte{"record": doc}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(a, "a", 40)  // a cuts dictionary 1 at size 16
	appendN(b, "b", 260) // b reads a's entries' dictionary, cuts 2 at 256
	for _, l := range []*Ledger{a, b} {
		for _, i := range []int64{3, 20, 39, 100, 299} {
			e, err := l.EntryAt(i)
			if err != nil {
				t.Fatalf("entry %d: %v", i, err)
			}
			if !strings.Contains(string(e.Docs["record"]), e.ID) {
				t.Fatalf("entry %d: document %q", i, e.Docs["record"])
			}
		}
		mustCheck(t, l)
	}
	var dicts int
	db, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if err := db.QueryRow(context.Background(), "SELECT count(*) FROM dicts").Scan(&dicts); err != nil || dicts != 2 {
		t.Fatalf("%d dictionaries (%v), want 2", dicts, err)
	}
	appendN(a, "c", 5) // a compresses with b's newest dictionary once it knows it
	mustCheck(t, b)
}

// A store whose pool is closed answers ErrClosed, not ErrUnavailable: the
// pool's closed-pool error is recognized as such.
func TestPostgresClosedPoolIsClosed(t *testing.T) {
	l := openPG(t, pgtest.Schema(t))
	s := l.store.(*pgStore)
	s.pool.Close()
	if _, err := s.latest(); !errors.Is(err, ErrClosed) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("latest on a closed pool: %v, want ErrClosed", err)
	}
}

// A read-only open of a schema no writer has opened finds no log there
// (ErrNotFound, as Check of a missing file), not an invalid argument.
func TestPostgresReadOnlyOpenOfNothing(t *testing.T) {
	url := pgtest.Schema(t)
	_, v, _ := testKey(t, testOrigin, "log key 1")
	if err := Check(url, v); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Check of an empty schema: %v, want ErrNotFound", err)
	}
	openPG(t, url)
	if err := Check(url, v); err != nil {
		t.Fatalf("Check once a writer opened it: %v", err)
	}
}

package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const testOrigin = "fiscal402.test/log"

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// checkGolden compares got with testdata/name, or rewrites the file under
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	testtool.Golden(t, filepath.Join("testdata", name), got, *update)
}

// testKey returns a log key derived from seed, so tests are reproducible.
func testKey(t testing.TB, origin, seed string) (note.Signer, note.Verifier, string) {
	t.Helper()
	sum := sha256.Sum256([]byte(seed))
	skey, vkey, err := GenerateLogKey(origin, bytes.NewReader(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v, vkey
}

// eachBackend runs fn once per backend of pgtest.Backends (the bbolt file,
// and PostgreSQL in a schema of the test's own: skipped without a server,
// failing under FISCAL402_STRICT=1); testLedger and reopen inside it open
// that backend.
func eachBackend(t *testing.T, fn func(t *testing.T)) { pgtest.EachBackend(t, fn) }

// newStorePath returns where a new ledger of the test's backend lives: a
// file path, or the URL of a fresh schema.
func newStorePath(t testing.TB) string {
	if pgtest.OnPostgres(t) {
		return pgtest.Schema(t)
	}
	return filepath.Join(t.TempDir(), "ledger.db")
}

// openAt opens the ledger at a path newStorePath gave.
func openAt(path string, opts Options) (*Ledger, error) {
	if strings.HasPrefix(path, "postgres://") {
		return OpenPostgres(context.Background(), path, opts)
	}
	return Open(path, opts)
}

// testLedger opens a new ledger of the test's backend with the test key.
func testLedger(t testing.TB, mutate ...func(*Options)) (*Ledger, string, note.Verifier) {
	t.Helper()
	s, v, _ := testKey(t, testOrigin, "log key 1")
	opts := Options{Origin: testOrigin, Signer: s}
	for _, m := range mutate {
		m(&opts)
	}
	path := newStorePath(t)
	l, err := openAt(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path, v
}

// reopen opens path again with the test key.
func reopen(t testing.TB, path string) *Ledger {
	t.Helper()
	s, _, _ := testKey(t, testOrigin, "log key 1")
	l, err := openAt(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// simpleEntry is a Build that derives everything from name and index.
func simpleEntry(name string) func(int64) (Entry, error) {
	return func(index int64) (Entry, error) {
		return Entry{
			ID:   name,
			Leaf: []byte(fmt.Sprintf("leaf %s at %d", name, index)),
			Docs: map[string][]byte{
				"record": []byte(`{"id":"` + name + `"}`),
				"ubl":    []byte("<Invoice>" + name + "</Invoice>"),
			},
			Postings: []Posting{{Index: "by_name", Key: []byte(name)}},
		}, nil
	}
}

// mustAppend appends a simple entry with one claim and fails the test on error.
func mustAppend(t testing.TB, l *Ledger, name string) Appended {
	t.Helper()
	a, err := l.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp:" + name)}},
		Build:  simpleEntry(name),
	})
	if err != nil {
		t.Fatalf("append %s: %v", name, err)
	}
	return a
}

// mustCheck runs Ledger.Check and fails the test on error.
func mustCheck(t testing.TB, l *Ledger) {
	t.Helper()
	if err := l.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// refTree is an independent RFC 6962 §2.1 Merkle tree hash (MTH) over leaf
// hashes, written from the RFC's recursive definition and not from tlog,
// so that the ledger's roots and proofs are checked against a second
// implementation.
type refTree struct{ leaves []tlog.Hash }

func (r *refTree) add(leaf []byte) {
	r.leaves = append(r.leaves, refLeafHash(leaf))
}

func refLeafHash(leaf []byte) tlog.Hash {
	return sha256.Sum256(append([]byte{0x00}, leaf...))
}

func refNodeHash(l, r tlog.Hash) tlog.Hash {
	buf := append([]byte{0x01}, l[:]...)
	return sha256.Sum256(append(buf, r[:]...))
}

// root returns MTH(D[0:n]).
func (r *refTree) root(n int64) tlog.Hash {
	return refMTH(r.leaves[:n])
}

func refMTH(d []tlog.Hash) tlog.Hash {
	switch len(d) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return d[0]
	}
	k := 1
	for k*2 < len(d) {
		k *= 2
	}
	return refNodeHash(refMTH(d[:k]), refMTH(d[k:]))
}

// namesRows fails t when set (the rows a table treats apart, by name)
// names a row the table does not have: a renamed row must not silently
// lose its special case.
func namesRows(t *testing.T, what string, set map[string]bool, rows int, name func(i int) string) {
	t.Helper()
	have := map[string]bool{}
	for i := range rows {
		have[name(i)] = true
	}
	for n := range set {
		if !have[n] {
			t.Fatalf("%s names %q, which is not a row", what, n)
		}
	}
}

// commitDurable commits a batch on the caller's goroutine (the committer
// idle) and waits until it is durable, as the committer's answers do.
func (l *Ledger) commitDurable(batch []*request) []result {
	results, p := l.commit(batch)
	if p == nil {
		return results
	}
	return l.finishDurable(p)
}

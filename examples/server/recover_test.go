package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/ledger"
)

// TestCheckRecoverAfterAKill: a server killed (SIGKILL) after answering
// settlements leaves a ledger file whose newest commits only its journal
// holds. `check` refuses it and names -recover; `check -recover` refuses
// while the server runs (it would replay under a live writer) and on a
// ledger file that is not there (it never makes one); on the stopped
// server's directory it replays the journal, reports the log size the
// server had served, and ledger.Check passes; the server then starts on
// it and serves the same checkpoint (size and root).
func TestCheckRecoverAfterAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary")
	}
	dir := t.TempDir()
	p := startServer(t, dir)
	for n := range 12 {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("settlement %d: %d %s", n, status, body)
		}
	}
	_, served := p.get(t, "/v1/log/checkpoint", false)
	size := checkpointSize(t, served)

	// While the server runs: refused, nothing replayed under it.
	out, errOut, err := runCommand(t, nil, "check", "-data", dir, "-recover")
	if err == nil || strings.Contains(out, "replayed") {
		t.Fatalf("check -recover while the server runs: %v\n%s%s", err, out, errOut)
	}
	p.kill()

	// -recover is an action, not a setting: a FISCAL402_RECOVER left in
	// the environment does not turn every check into a write; it is
	// refused by name (TestActionVariablesRefused), and nothing replayed.
	out, errOut, err = runCommand(t, []string{"FISCAL402_RECOVER=true"}, "check", "-data", dir)
	if err == nil || !strings.Contains(errOut, "FISCAL402_RECOVER") || strings.Contains(out, "replayed") {
		t.Fatalf("check with FISCAL402_RECOVER: %v\n%s%s; want the variable refused", err, out, errOut)
	}
	out, errOut, err = runCommand(t, nil, "check", "-data", dir)
	if err == nil || !strings.Contains(errOut, "not closed") || !strings.Contains(errOut, "check -recover") {
		t.Fatalf("check of a killed server's ledger: %v\n%s%s; want the refusal naming -recover", err, out, errOut)
	}

	// A data directory without a ledger file: no new, empty ledger.
	empty := t.TempDir()
	copyTree(t, filepath.Join(dir, "keys"), filepath.Join(empty, "keys"))
	if out, errOut, err := runCommand(t, nil, "check", "-data", empty, "-recover"); err == nil {
		t.Fatalf("check -recover without a ledger file: passed\n%s%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, "ledger.db")); !os.IsNotExist(err) {
		t.Fatalf("check -recover without a ledger file made one: %v", err)
	}

	out, errOut, err = runCommand(t, nil, "check", "-data", dir, "-recover")
	want := "journal replayed and checkpointed; log size " + strconv.FormatInt(size, 10) + "\n"
	if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "ledger.Check passed") || !strings.Contains(out, "log size "+strconv.FormatInt(size, 10)+",") {
		t.Fatalf("check -recover: %v\n%s%s; want %q and ledger.Check passed at size %d", err, out, errOut, want, size)
	}
	// Closed at the replayed state: a plain check passes now.
	if out, errOut, err := runCommand(t, nil, "check", "-data", dir); err != nil || !strings.Contains(out, "ledger.Check passed") {
		t.Fatalf("check after -recover: %v\n%s%s", err, out, errOut)
	}

	r := startServer(t, dir)
	_, again := r.get(t, "/v1/log/checkpoint", false)
	if a, b := checkpointBody(served), checkpointBody(again); a != b {
		t.Fatalf("checkpoint after check -recover and a start:\n%s\nwant the one served before the kill:\n%s", b, a)
	}
	if status, body := r.post(12); status != 201 {
		t.Fatalf("settlement after the recovery: %d %s", status, body)
	}
}

// checkpointBody is a checkpoint's signed text (origin, size, root),
// without its signature lines.
func checkpointBody(cp []byte) string {
	body, _, _ := strings.Cut(string(cp), "\n\n")
	return body
}

const recoverOrigin = "fiscal402.test/log"

// recoverDataDir makes a data directory whose keys/log.key is the ledger
// tests' key ("log key 1", the key of ledger/testdata/v2).
func recoverDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("log key 1"))
	skey, _, err := ledger.GenerateLogKey(recoverOrigin, bytes.NewReader(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keys", "log.key"), []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecoverMakesNoLogOfABucketlessFile: a ledger.db that is a bbolt
// file without buckets (left by a crash of an older version between
// creating the file and writing its meta, or any empty bbolt file given
// as -ledger) has no journal to replay: check -recover writes nothing, so
// it never makes it a new log (whose first checkpoint would lack the
// receipt key's cosignature the server's start adds). A review found the
// first -recover, which opened every file for writing, did.
func TestRecoverMakesNoLogOfABucketlessFile(t *testing.T) {
	dir := recoverDataDir(t)
	p := filepath.Join(dir, "ledger.db")
	db, err := bolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out, errOut bytes.Buffer
	err = runCheck([]string{"-data", dir, "-recover"}, &out, &errOut)
	t.Logf("check -recover: err %v\nstdout: %s", err, out.String())
	if !strings.Contains(out.String(), "nothing to replay") {
		t.Errorf("check -recover of a file without a journal: %q, want nothing to replay", out.String())
	}
	if err == nil {
		rawCkpt := ""
		db, _ := bolt.Open(p, 0o600, &bolt.Options{ReadOnly: true})
		db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket([]byte("checkpoints")); b != nil {
				_, v := b.Cursor().Last()
				rawCkpt = string(v)
			}
			return nil
		})
		db.Close()
		t.Logf("checkpoint it signed:\n%s", rawCkpt)
		t.Fatalf("check -recover made a new, empty log of a file that held none (%d signature line(s), no receipt-key cosignature)",
			strings.Count(rawCkpt, "\u2014 "))
	}
}

// TestRecoverWritesNothingWithNothingToReplay: a restored backup copy (no
// journal files, closed cleanly: nothing to replay), checked with -ledger
// and -recover: the copy is not opened for writing, so it gets no journal
// files and keeps its older schema (the schema-2 fixture of
// ledger/testdata/v2), which the version that wrote it can still open. A
// review found the first -recover upgraded it in place.
func TestRecoverWritesNothingWithNothingToReplay(t *testing.T) {
	dir := recoverDataDir(t)
	copyDir := t.TempDir()
	p := filepath.Join(copyDir, "restored.db")
	src, err := os.Open(filepath.Join("..", "..", "ledger", "testdata", "v2", "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
	io.Copy(dst, src)
	src.Close()
	dst.Close()
	schema := func() string {
		db, err := bolt.Open(p, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var s string
		db.View(func(tx *bolt.Tx) error { s = string(tx.Bucket([]byte("meta")).Get([]byte("schema"))); return nil })
		return s
	}
	before := schema()
	// The fixture is the ledger package's, not a server's: its leaves are
	// markers and its record documents "{}", so check, which checks the
	// documents against their leaves as the server's -check full does,
	// refuses it after ledger.Check, with that reason and nothing else.
	documents := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), `document "record" does not match the digest its leaf commits to`)
	}
	var out, errOut bytes.Buffer
	if err := runCheck([]string{"-data", dir, "-ledger", p}, &out, &errOut); !documents(err) {
		t.Fatalf("plain check: %v", err)
	}
	t.Logf("plain check: %s", out.String())
	out.Reset()
	if err := runCheck([]string{"-data", dir, "-ledger", p, "-recover"}, &out, &errOut); !documents(err) {
		t.Fatalf("check -recover: %v", err)
	}
	t.Logf("check -recover: %s", out.String())
	if !strings.Contains(out.String(), "nothing to replay") {
		t.Errorf("check -recover of a restored copy: %q, want nothing to replay, then the check", out.String())
	}
	entries, _ := os.ReadDir(copyDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	after := schema()
	if len(names) != 1 || after != before {
		t.Fatalf("check -recover of a file with nothing to replay: schema %q -> %q; the directory now holds %v", before, after, names)
	}
}

// TestCheckRefusesWhatTheStartRefuses: a backup copy restored over
// ledger.db in a data directory whose journal (closed cleanly) belongs to
// a later state of the file. The server's start refuses it (a
// *ledger.JournalMismatchError: move the journal away, or put back the
// file it belongs to; not "damaged ... restore from backup"); so do check
// and check -recover, rather than pass a directory the next start will not
// serve. A review found check -recover passing it once it no longer opened
// a clean journal's file for writing (a plain check always had).
func TestCheckRefusesWhatTheStartRefuses(t *testing.T) {
	dir := recoverDataDir(t)
	p := filepath.Join(dir, "ledger.db")
	cp := func(from, to string) {
		src, err := os.Open(from)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		dst.Close()
	}
	cp(filepath.Join("..", "..", "ledger", "testdata", "v2", "ledger.db"), p)
	backup := filepath.Join(t.TempDir(), "backup.db")
	cp(p, backup) // the backup, taken before the server ran on it

	sum := sha256.Sum256([]byte("log key 1"))
	skey, _, err := ledger.GenerateLogKey(recoverOrigin, bytes.NewReader(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	startOnce := func() error {
		s, err := note.NewSigner(skey)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ledger.Open(p, ledger.Options{Origin: s.Name(), Signer: s})
		if err != nil {
			return err
		}
		return l.Close()
	}
	if err := startOnce(); err != nil { // a start (upgrade, journal), then a clean close
		t.Fatal(err)
	}
	cp(backup, p) // the backup restored over it; the journal files stay

	for _, args := range [][]string{{"-data", dir}, {"-data", dir, "-recover"}} {
		var out, errOut bytes.Buffer
		err := runCheck(args, &out, &errOut)
		if !errors.Is(err, ledger.ErrJournalMismatch) || !strings.Contains(err.Error(), "move the journal files away") || strings.Contains(err.Error(), "damaged") {
			t.Errorf("check %v of a backup copied over a journaled file: %v\n%s", args, err, out.String())
		}
	}
	if err := startOnce(); !errors.Is(err, ledger.ErrJournalMismatch) {
		t.Errorf("the start: %v, want the refusal", err)
	}
}

// TestStartRefusesAnOlderCopyBesideItsJournal: the real binary, stopped
// cleanly, its ledger file replaced by a copy taken before its later
// commits while the journal files stay: the start refuses with one line
// that names the journal files and both remedies and does not call the
// file damaged (it is not); with the journal files moved away, the copy
// serves what it holds.
func TestStartRefusesAnOlderCopyBesideItsJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	p := startServer(t, dir)
	for n := range 5 {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
	}
	p.stop(t)
	older, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p = startServer(t, dir)
	for n := 5; n < 12; n++ {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
	}
	p.stop(t)
	if err := os.WriteFile(path, older, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runToExit(t, dir)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "refusing to start") ||
		!strings.Contains(lines[0], "ledger.db.journal0") || !strings.Contains(lines[0], "move the journal files away") ||
		!strings.Contains(lines[0], "put back the file they belong to") || strings.Contains(lines[0], "damaged") {
		t.Fatalf("exit %d, stderr %d lines (want 1 naming the journal and both remedies):\n%s\n%s", code, len(lines), errOut, out)
	}
	for _, j := range []string{"ledger.db.journal0", "ledger.db.journal1"} {
		if err := os.Rename(filepath.Join(dir, j), filepath.Join(t.TempDir(), j)); err != nil {
			t.Fatal(err)
		}
	}
	p = startServer(t, dir)
	defer p.stop(t)
	if status, body := p.post(12); status != 201 {
		t.Fatalf("the copy, its journal moved away: post: %d %s", status, body)
	}
}

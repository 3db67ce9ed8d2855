package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/internal/anchor"
	"github.com/fiscal402/fiscal402/internal/durable"
	"github.com/fiscal402/fiscal402/ledger"
)

// The backup and check commands:
//
//	server backup [-server URL] [-data DIR] [-operator-key-file FILE] [-o FILE]
//	server check  [-data DIR] [-ledger FILE] [-log-key KEY] [-recover]
//
// backup asks the running server for a hot copy of its ledger (GET
// /v1/admin/backup, with the operator key) and writes it to -o (or stdout).
// With -o the copy is written beside the target, fsynced, verified with
// ledger.Check against the server's log key (GET /.well-known/log-key) and
// only then renamed into place, so a file at -o is always a whole, checked
// copy; a target a running server has open (its ledger's lock), and an
// existing file that is not an earlier copy of the same log, are refused
// before anything is asked. check verifies a ledger file (a restored copy, or the data
// directory's ledger.db while the server is stopped) and prints its log
// size and root: after a restore, they match the checkpoint the server had
// at that size. A ledger file the server did not close (a crash, a kill)
// holds commits only its journal has: check refuses it
// (ledger.ErrNeedsRecovery) unless -recover, which first replays the
// journal as the server's next start would (opening the file for writing
// with <data>/keys/log.key, then closing it), without serving anything.

// listenURL is the base URL of a server started with -listen addr (its
// FISCAL402_LISTEN): the address the backup asks by default. A wildcard
// host (":8402", "0.0.0.0:8402", "[::]:8402") is this machine's loopback;
// no address, or one that does not parse, the server's default.
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if addr == "" || err != nil || port == "" {
		return "http://127.0.0.1:8402"
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func runBackup(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", listenURL(os.Getenv("FISCAL402_LISTEN")), "the running server's base URL (default: the address of FISCAL402_LISTEN, else http://127.0.0.1:8402)")
	data := fs.String("data", "fiscal402-data", "the server's data directory (where the operator key is kept by default)")
	keyFile := fs.String("operator-key-file", "", "file holding the operator key (default <data>/keys/operator.key; FISCAL402_OPERATOR_KEY sets the key itself)")
	out := fs.String("o", "", "write the copy to this file, verified (default: stdout, unverified)")
	if err := applyEnv(fs, os.Getenv); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("backup: unexpected argument %q", fs.Arg(0))
	}
	if *out != "" {
		// The copy is renamed over -o: over a ledger a server has open
		// (its own ledger.db, one wrong argument), the server would go on
		// writing to the unlinked file, and what it acknowledged after the
		// copy would be lost. A running server holds its ledger's lock.
		unlock, err := tryLockFile(*out)
		switch {
		case errors.Is(err, errHeld):
			return fmt.Errorf("backup: %s is a ledger a running server has open (another process holds its lock): write the copy elsewhere; nothing written", *out)
		case err == nil:
			unlock()
		}
	}
	key, err := operatorKey(*keyFile, *data, os.Getenv("FISCAL402_OPERATOR_KEY"), false)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// The copy's file beside the target, made before the server is asked:
	// a target that cannot be written (a missing directory, no permission)
	// is refused by its name before a whole copy is streamed for nothing.
	var tmp *os.File
	var replaced ledger.Checkpoint // the copy at -o that a newer one replaces
	var replacing bool
	if *out != "" {
		// A directory cannot be renamed over: refused by its name, before
		// a copy is made in its parent and streamed for nothing.
		if fi, err := os.Stat(*out); err == nil && fi.IsDir() {
			return fmt.Errorf("backup: -o %s is a directory: name the file to write (e.g. -o %s); nothing asked of the server", *out, filepath.Join(*out, "ledger-backup.db"))
		}
		// An existing file is replaced only by a newer copy of the same
		// log (a nightly backup to one name); a file that is none (a
		// mistyped target: accounts.json, a key, another server's
		// ledger) is refused before a copy is asked for.
		if fi, err := os.Lstat(*out); err == nil {
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("backup: -o %s exists and is not a regular file: name a new file; nothing asked of the server", *out)
			}
			vkey, err := fetchText(&http.Client{}, strings.TrimRight(*server, "/")+"/.well-known/log-key")
			if err != nil {
				return fmt.Errorf("backup: -server %s: the log key: %w", strings.TrimRight(*server, "/"), err)
			}
			if replaced, err = checkLedger(*out, vkey); err != nil {
				return fmt.Errorf("backup: -o %s exists and is not a copy of this server's ledger (%v): it is not replaced; name a new file, or move it away; nothing asked of the server", *out, err)
			}
			replacing = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("backup: -o %s: %w; nothing asked of the server", *out, err)
		}
		if tmp, err = os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".part*"); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the temporary name means nothing to the operator
			}
			return fmt.Errorf("backup: -o %s: cannot write beside it: %w; nothing asked of the server", *out, err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
	}
	base := strings.TrimRight(*server, "/")
	client := &http.Client{} // no overall timeout: a large ledger takes as long as it takes
	start := time.Now()
	req, err := http.NewRequest("GET", base+"/v1/admin/backup", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var p struct{ Code, Detail string }
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(raw, &p) != nil || p.Code == "" {
			return fmt.Errorf("backup: -server %s answered %s, not a fiscal402 problem document: is it the fiscal402 server's address?", base, resp.Status)
		}
		msg := fmt.Sprintf("backup: -server %s answered %d %s: %s", base, resp.StatusCode, p.Code, p.Detail)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// Where the key came from, never the key: a data directory
			// of another server, a stale file.
			msg += fmt.Sprintf(" (the operator key from %s; the server's own is in its <data>/keys/operator.key)", operatorKeySource(*keyFile, *data, os.Getenv("FISCAL402_OPERATOR_KEY")))
		}
		return errors.New(msg)
	}
	if *out == "" {
		n, err := io.Copy(stdout, resp.Body)
		if err != nil {
			return fmt.Errorf("backup: the stream broke after %d bytes: %w (the output is not a usable copy)", n, err)
		}
		fmt.Fprintf(stderr, "backup: %d bytes in %s (not verified: check it with `server check -ledger FILE -log-key KEY`)\n", n, time.Since(start).Round(time.Millisecond))
		return nil
	}
	n, err := io.Copy(tmp, resp.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup: the stream broke after %d bytes: %w (nothing written to %s)", n, err, *out)
	}
	took := time.Since(start)
	vkey, err := fetchText(client, base+"/.well-known/log-key")
	if err != nil {
		return fmt.Errorf("backup: the server's log key: %w", err)
	}
	cp, err := checkLedger(tmp.Name(), vkey)
	if err != nil {
		return fmt.Errorf("backup: the copy does not verify, nothing written to %s: %w", *out, err)
	}
	if replacing && replaced.Size > cp.Size {
		return fmt.Errorf("backup: -o %s holds a longer log (size %d) than the server's copy (size %d): is -server the server it was copied from? Nothing replaced", *out, replaced.Size, cp.Size)
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return fmt.Errorf("backup: -o %s: %w (the verified copy was not put in place)", *out, err)
	}
	// The copy's bytes were synced before the check; its new name is
	// durable once its directory is (a power cut would otherwise leave the
	// copy under its temporary name, which nobody looks for).
	if err := durable.SyncDir(filepath.Dir(*out)); err != nil {
		return fmt.Errorf("backup: %s: sync its directory: %w", *out, err)
	}
	fmt.Fprintf(stderr, "backup: %s: %d bytes in %s; ledger.Check passed; log size %d, root %s\n",
		*out, n, took.Round(time.Millisecond), cp.Size, base64.StdEncoding.EncodeToString(cp.Root[:]))
	return nil
}

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "fiscal402-data", "data directory: its ledger.db and keys/log.key")
	path := fs.String("ledger", "", "the ledger file to check (default: the server's -store, else <data>/ledger.db), or a postgres:// URL")
	store := fs.String("store", "", "the server's PostgreSQL ledger (postgres:// URL, also FISCAL402_DATABASE_URL), checked when -ledger is not given")
	vkey := fs.String("log-key", "", "the log verifier key (default: derived from <data>/keys/log.key)")
	replay := fs.Bool("recover", false, "first replay the journal of a ledger file the server did not close (a crash, a kill), as its next start would: needs <data>/keys/log.key and the server stopped")
	if err := applyEnv(fs, os.Getenv); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("check: unexpected argument %q (a file to check is -ledger FILE)", fs.Arg(0))
	}
	if *path == "" {
		// A replica's ledger is where the server keeps it (-store, as the
		// server reads it): a replica has no ledger.db.
		u, err := storeURL(*store, os.Getenv)
		if err != nil {
			return err
		}
		*path = cmp.Or(u, filepath.Join(*data, "ledger.db"))
	}
	if fi, err := os.Stat(*path); err == nil && fi.IsDir() {
		return fmt.Errorf("check: -ledger %s is a directory: name the ledger file (e.g. -ledger %s)", *path, filepath.Join(*path, "ledger.db"))
	}
	if *replay {
		if err := recoverLedger(*path, filepath.Join(*data, "keys", "log.key"), stdout); err != nil {
			return heldByServer(err, *path, "stop the server first (its start replayed the journal: there is nothing to recover while it runs)")
		}
	}
	if *vkey == "" {
		k, err := logVerifierKey(filepath.Join(*data, "keys", "log.key"))
		if err != nil {
			return err
		}
		*vkey = k
	}
	cp, err := checkLedger(*path, *vkey)
	err = heldByServer(err, *path, "stop the server first, or check a hot copy: server backup -o COPY, then server check -data "+*data+" -ledger COPY")
	if errors.Is(err, ledger.ErrNeedsRecovery) {
		err = fmt.Errorf("%w; check -recover replays it without serving", err)
	}
	if err != nil {
		// Named like the success line: which copy failed.
		if name := redact(*path); !strings.Contains(err.Error(), name) {
			err = fmt.Errorf("check %s: %w", name, err)
		}
		return err
	}
	fmt.Fprintf(stdout, "%s: ledger.Check passed; origin %s, log size %d, root %s\n", redact(*path), cp.Origin, cp.Size, base64.StdEncoding.EncodeToString(cp.Root[:]))
	return nil
}

// recoverLedger replays the journal of the ledger file at path, if it
// holds commits the file does not (ledger.NeedsRecovery), by opening it for
// writing with the log key at keyPath and closing it: the state the
// server's next start would serve. Nothing is written otherwise: a file
// closed cleanly (a restored copy) keeps its schema and gets no journal
// files, and a file without a journal to replay is never made a new log.
// A PostgreSQL ledger has no journal: its commits are durable in the
// database.
func recoverLedger(path, keyPath string, stdout io.Writer) error {
	if u, _ := storeURL(path, func(string) string { return "" }); u != "" {
		fmt.Fprintf(stdout, "%s: nothing to replay (a PostgreSQL ledger has no journal)\n", redact(path))
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	needs, err := ledger.NeedsRecovery(path)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if !needs {
		fmt.Fprintf(stdout, "%s: nothing to replay (closed cleanly, or no journal)\n", redact(path))
		return nil
	}
	s, err := readLogSigner(keyPath, "the journal is replayed with the server's own key")
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	l, err := ledger.Open(path, ledger.Options{Origin: s.Name(), Signer: s})
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	size := l.Size()
	if err := l.Close(); err != nil {
		return fmt.Errorf("recover: closing %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "%s: journal replayed and checkpointed; log size %d\n", redact(path), size)
	return nil
}

// checkLedger runs ledger.Check on the file, then checks its documents
// against their leaves as the server's -check full does, and returns its
// latest checkpoint.
func checkLedger(path, vkey string) (ledger.Checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return ledger.Checkpoint{}, fmt.Errorf("log key: %w", err)
	}
	if err := ledger.Check(path, v); err != nil {
		return ledger.Checkpoint{}, err
	}
	var l *ledger.Ledger
	if u, _ := storeURL(path, func(string) string { return "" }); u != "" {
		l, err = ledger.OpenPostgres(context.Background(), u, ledger.Options{Origin: v.Name(), Verifier: v})
	} else {
		l, err = ledger.Open(path, ledger.Options{Origin: v.Name(), Verifier: v})
	}
	if err != nil {
		return ledger.Checkpoint{}, err
	}
	defer l.Close()
	// What -check full adds at the server's start: every record and invoice
	// against the digest its leaf commits to. ledger.Check sees the log, not
	// the documents it commits to; a file it passes may still hold a record
	// every read of which answers LEDGER_INTEGRITY.
	if err := anchor.CheckDocuments(l, redact(path)); err != nil {
		return ledger.Checkpoint{}, err
	}
	return l.Checkpoint()
}

// logVerifierKey derives the verifier key from a data directory's log key
// file (never creating one).
func logVerifierKey(path string) (string, error) {
	s, err := readLogSigner(path, "give -log-key, the server's GET /.well-known/log-key")
	if err != nil {
		return "", err
	}
	_, vkey, err := ledger.LoadOrCreateLogKey(path, s.Name())
	return vkey, err
}

// readLogSigner reads a data directory's log key file (never creating
// one); hint, in a missing or unreadable file's error, says what to do.
func readLogSigner(path, hint string) (note.Signer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("log key: %w (%s)", err, hint)
	}
	s, err := note.NewSigner(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	return s, nil
}

func fetchText(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	return strings.TrimSpace(string(raw)), nil
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/sandbox"
)

// The ledger store: -store postgres://… (or FISCAL402_STORE, or
// FISCAL402_DATABASE_URL) keeps the ledger in PostgreSQL, shared by every
// replica started with the same URL; absent, the bbolt file
// <data>/ledger.db as always. README "Several replicas on PostgreSQL".

// storeURL returns the store the server uses: the flag, else
// FISCAL402_DATABASE_URL; "" for the bbolt file.
func storeURL(flagValue string, getenv func(string) string) (string, error) {
	u := flagValue
	if u == "" {
		u = getenv("FISCAL402_DATABASE_URL")
	}
	if u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		return "", fmt.Errorf("-store %q: want a postgres:// URL (or nothing for the bbolt file in -data)", redact(u))
	}
	return u, nil
}

// redact drops what follows "://" up to '@' (a password) from a URL for
// messages, and the query parameters that carry a secret (libpq takes
// password and sslpassword in the query too).
func redact(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u // a file path
	}
	if j := strings.LastIndex(u, "@"); j > i {
		u = u[:i+3] + "…" + u[j:]
	}
	base, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return base + "?…"
	}
	for k := range q {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
			q.Del(k)
		}
	}
	if len(q) == 0 {
		return base
	}
	return base + "?" + q.Encode()
}

// runMigrate is "server migrate": it copies the bbolt ledger of a data
// directory (and its sandbox ledger, if there is one) into PostgreSQL and
// proves each copy (ledger.CopyToPostgres: Check on the file, Check on the
// copy, and the same latest checkpoint byte for byte). Stop the server
// first; then start the replicas with -store.
func runMigrate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "fiscal402-data", "data directory whose ledger.db (and sandbox/ledger.db) to copy")
	store := fs.String("store", "", "PostgreSQL URL to copy into (also FISCAL402_STORE or FISCAL402_DATABASE_URL); its log must be empty")
	// The server's variables, as the other commands read them: the
	// environment that configures the server configures its migration.
	if err := applyEnv(fs, os.Getenv); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("migrate: unexpected argument %q (the database is -store URL, the data directory -data DIR)", fs.Arg(0))
	}
	u, err := storeURL(*store, os.Getenv)
	if err != nil {
		return err
	}
	if u == "" {
		return usagef("migrate: give -store postgres://… (or FISCAL402_DATABASE_URL)")
	}
	copies := []struct{ dir, url string }{{*data, u}}
	if _, err := os.Stat(filepath.Join(*data, "sandbox", "ledger.db")); err == nil {
		copies = append(copies, struct{ dir, url string }{filepath.Join(*data, "sandbox"), sandbox.StoreURL(u)})
	}
	for _, c := range copies {
		raw, err := os.ReadFile(filepath.Join(c.dir, "keys", "log.key"))
		if err != nil {
			return fmt.Errorf("migrate: log key: %w", err)
		}
		s, err := note.NewSigner(strings.TrimSpace(string(raw)))
		if err != nil {
			return fmt.Errorf("migrate: log key of %s: %w", c.dir, err)
		}
		file := filepath.Join(c.dir, "ledger.db")
		rep, err := ledger.CopyToPostgres(context.Background(), file, c.url, ledger.Options{Origin: s.Name(), Signer: s})
		if errors.Is(err, ledger.ErrInvalid) {
			// A run again, after one that copied this ledger and failed at
			// the next: a log that is already this file's, to its latest
			// checkpoint, is left as it is. Anything else stays refused.
			if cp, same := copiedBefore(file, c.url, c.dir); same {
				fmt.Fprintf(stdout, "%s → %s: already copied (an earlier run); it ends at the file's checkpoint, size %d root %s (ledger.Check passed on it); nothing written\n",
					file, redact(c.url), cp.Size, base64.StdEncoding.EncodeToString(cp.Root[:]))
				continue
			}
			err = fmt.Errorf("%w (its log is not this file's to the file's latest checkpoint: a replica wrote to it, or it is another server's; migrate copies into an empty log only, and wrote nothing)", err)
		}
		if err != nil {
			return fmt.Errorf("migrate %s: %w", c.dir, heldByServer(err, file, "stop the server first: migrate copies a stopped server's file"))
		}
		fmt.Fprintf(stdout, "%s → %s: %d entries, %d stored hashes, %d checkpoints, %d claims, %d postings, %d side values; both end at size %d root %s (ledger.Check passed on both)\n",
			file, redact(c.url), rep.Entries, rep.Hashes, rep.Checkpoints, rep.Claims, rep.Postings, rep.Side,
			rep.Copy.Size, base64.StdEncoding.EncodeToString(rep.Copy.Root[:]))
	}
	return nil
}

// copiedBefore tells whether the PostgreSQL log at url already is the
// ledger file's log: it checks (checkLedger, with the data directory's log
// key), and its latest checkpoint is the file's, byte for byte.
func copiedBefore(file, url, dir string) (ledger.Checkpoint, bool) {
	vkey, err := logVerifierKey(filepath.Join(dir, "keys", "log.key"))
	if err != nil {
		return ledger.Checkpoint{}, false
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return ledger.Checkpoint{}, false
	}
	src, err := ledger.Open(file, ledger.Options{Origin: v.Name(), Verifier: v})
	if err != nil {
		return ledger.Checkpoint{}, false
	}
	want, err := src.Checkpoint()
	src.Close()
	if err != nil {
		return ledger.Checkpoint{}, false
	}
	got, err := checkLedger(url, vkey)
	if err != nil || !bytes.Equal(got.Note, want.Note) {
		return ledger.Checkpoint{}, false
	}
	return got, true
}

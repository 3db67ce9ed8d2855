package audit

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/ledger"
)

// TestExitStatusSaysWhy: an auditor's script tells the four outcomes apart
// by the exit status alone: verified, not verified (a check failed on the
// evidence: a changed receipt, a ledger whose record and receipt
// disagree), a usage problem (the command line is wrong or misses an
// input, or a key given is not one), and an input that could not be read
// (a missing file, a directory, a server that does not answer). The last
// two print nothing on stdout and name the flag or file on stderr.
func TestExitStatusSaysWhy(t *testing.T) {
	w := getWorld(t)
	db := filepath.Join(w.dir, "ledger.db")
	keys := []string{"--jwks", w.jwks, "--log-key-file", w.logFile}
	missing := filepath.Join(w.files, "no-such-file.json")
	notKeys := w.receiptDE // a receipt where the key set is expected
	down := httptest.NewServer(nil)
	down.Close()
	changed := tamper(t, w.receiptDE, []byte(`"amount_usdc": "11.90"`), []byte(`"amount_usdc": "11.91"`))
	recordDisagrees := tamperEntry(t, db, 1, "docs", replaceOnce(t, []byte(`"amountUsdc":"5.00","timestamp"`), []byte(`"amountUsdc":"6.00","timestamp"`)))
	unreadable := ExitUnreadable

	cases := []struct {
		name  string
		args  []string
		code  int
		names string // what stderr must name (usage and read problems)
	}{
		{"verified", append([]string{"receipt", w.receiptDE}, keys...), ExitOK, ""},
		{"ledger verified", []string{"ledger", db, "--log-key-file", w.logFile, "--jwks", w.jwks}, ExitOK, ""},
		{"receipt changed", append([]string{"receipt", changed}, keys...), ExitFailed, ""},
		{"ledger record and receipt disagree", []string{"ledger", recordDisagrees, "--log-key-file", w.logFile, "--jwks", w.jwks}, ExitFailed, ""},

		{"unknown flag", append([]string{"receipt", w.receiptDE, "--no-such-flag"}, keys...), ExitUsage, "-no-such-flag"},
		{"receipt without key set", []string{"receipt", w.receiptDE, "--log-key-file", w.logFile}, ExitUsage, "--jwks"},
		{"receipt without log key", []string{"receipt", w.receiptDE, "--jwks", w.jwks}, ExitUsage, "log-key"},
		{"receipt, log key not a key", []string{"receipt", w.receiptDE, "--jwks", w.jwks, "--log-key", "not-a-key"}, ExitUsage, "not-a-key"},
		{"receipt, key set not a key set", []string{"receipt", w.receiptDE, "--jwks", notKeys, "--log-key-file", w.logFile}, ExitUsage, filepath.Base(notKeys)},
		{"ledger without log key", []string{"ledger", db}, ExitUsage, "log-key"},
		{"return without receipts", []string{"return", w.receiptDE}, ExitUsage, "-receipts"},

		{"receipt file missing", append([]string{"receipt", missing}, keys...), unreadable, filepath.Base(missing)},
		{"receipt is a directory", append([]string{"receipt", w.files}, keys...), unreadable, w.files},
		{"key set missing", []string{"receipt", w.receiptDE, "--jwks", missing, "--log-key-file", w.logFile}, unreadable, filepath.Base(missing)},
		{"log key file missing", []string{"receipt", w.receiptDE, "--jwks", w.jwks, "--log-key-file", missing}, unreadable, filepath.Base(missing)},
		{"openings missing", append([]string{"receipt", w.receiptV3, "--openings", missing}, keys...), unreadable, filepath.Base(missing)},
		{"server down", []string{"receipt", w.receiptDE, "--server", down.URL}, unreadable, down.URL},
		{"ledger missing", []string{"ledger", missing, "--log-key-file", w.logFile}, unreadable, filepath.Base(missing)},
		{"ledger is a directory", []string{"ledger", w.files, "--log-key-file", w.logFile}, unreadable, w.files},
		{"checkpoint missing", []string{"consistency", missing, w.checkpointLast, "--log-key-file", w.logFile}, unreadable, filepath.Base(missing)},
		{"proof missing", []string{"consistency", w.checkpoint1, w.checkpointLast, "--log-key-file", w.logFile, "--proof", missing}, unreadable, filepath.Base(missing)},
		{"return missing", []string{"return", missing, "--receipts", w.files}, unreadable, filepath.Base(missing)},
		{"receipts directory missing", []string{"return", w.receiptDE, "--receipts", filepath.Join(w.files, "no-such-dir")}, unreadable, "no-such-dir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(c.args, &out, &errOut)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out.String(), errOut.String())
			}
			if c.code == ExitUsage || c.code == unreadable {
				if out.Len() != 0 || !strings.Contains(errOut.String(), c.names) {
					t.Errorf("want nothing on stdout and %q named on stderr\nstdout: %s\nstderr: %s", c.names, out.String(), errOut.String())
				}
			}
		})
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatal(err)
	}
}

// TestExitStatusDocumented: the README, the commands' documentation
// (examples/audit, examples/verify-receipt), this package's and the usage
// say what every exit status means in the words of exitWords.
func TestExitStatusDocumented(t *testing.T) {
	comment := regexp.MustCompile(`(?m)^\s*//\s?`)
	docs := map[string]string{}
	for _, p := range []string{"../../../README.md", "../../audit/main.go", "../../verify-receipt/main.go", "audit.go"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = flat(comment.ReplaceAllString(string(raw), ""))
	}
	var out, errOut bytes.Buffer
	Main(nil, &out, &errOut)
	docs["usage"] = flat(errOut.String())
	for name, doc := range docs {
		for code, words := range exitWords {
			if want := flat(fmt.Sprintf("%d %s", code, words)); !strings.Contains(doc, want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
	}
}

// TestLedgerWithUnreplayedJournal: a ledger file whose server did not
// close it (a crash, a kill, or a server still running) has commits its
// journal holds and the file may not: ledger.Check and every read-only
// open refuse it (README "The journal"), and so does "server check".
// "audit ledger" copied the file alone, without its journal, and said
// LEDGER VERIFIED of whatever the file held. It now refuses it as an
// input it cannot read whole, naming the journal and the remedy.
func TestLedgerWithUnreplayedJournal(t *testing.T) {
	w := getWorld(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(w.dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger.db")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	signer, _, err := ledger.LoadOrCreateLogKey(filepath.Join(w.dir, "keys", "log.key"), w.origin)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(db, ledger.Options{Origin: w.origin, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The files as a crash leaves them: copied while the writer has them open.
	crashed := t.TempDir()
	for _, name := range []string{"ledger.db", "ledger.db.journal0", "ledger.db.journal1"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(crashed, "ledger.db")
	if needs, err := ledger.NeedsRecovery(file); err != nil || !needs {
		t.Fatalf("the copy needs no recovery (%v, %v): the test does not make the state it is about", needs, err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"ledger", file, "--log-key-file", w.logFile}, &out, &errOut)
	if code != ExitUnreadable || out.Len() != 0 || !strings.Contains(errOut.String(), file) || !strings.Contains(errOut.String(), "journal") {
		t.Errorf("exit %d, want %d with the file and its journal named on stderr\nstdout: %s\nstderr: %s", code, ExitUnreadable, out.String(), errOut.String())
	}
}

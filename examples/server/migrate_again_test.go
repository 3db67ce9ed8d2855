package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestMigrateAgainAfterAHalfDoneRun: migrate copies the ledger, then the
// sandbox ledger, each in its own transaction. A run that copied the first
// and failed at the second (here the sandbox's log key was missing; as
// well a connection that dropped, or no right to create the sandbox's
// schema) could not be finished: every run again was refused at the first
// copy ("already holds a log"), and the operator was left to drop tables
// by hand. A log that already holds exactly the file's log (its latest
// checkpoint, byte for byte, and it checks) is now said so and left as it
// is, and the run goes on; a log that holds anything else (here: what a
// replica added after the migration) is still refused, and nothing is
// written to it.
func TestMigrateAgainAfterAHalfDoneRun(t *testing.T) {
	url := pgtest.Schema(t)
	dir := t.TempDir()
	p := startServer(t, dir)
	for n := range 5 {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
	}
	// A sandbox call makes the sandbox's ledger, which migrate copies second.
	status, _, raw := p.request(t, "POST", "/sandbox/v1/simulate", []byte(settlementBody(1000)), "Content-Type", "application/json")
	if status/100 != 2 {
		t.Fatalf("sandbox call: %d %s", status, raw)
	}
	p.stop(t)
	sandboxKey := filepath.Join(dir, "sandbox", "keys", "log.key")
	if _, err := os.Stat(filepath.Join(dir, "sandbox", "ledger.db")); err != nil {
		t.Fatalf("no sandbox ledger to migrate: %v", err)
	}
	if err := os.Rename(sandboxKey, sandboxKey+".away"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"migrate", "-data", dir, "-store", url}, &out, io.Discard); err == nil {
		t.Fatalf("migrate without the sandbox's log key succeeded:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "both end at size 5") {
		t.Fatalf("the first copy was not made before the second failed:\n%s", out.String())
	}
	if err := os.Rename(sandboxKey+".away", sandboxKey); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"migrate", "-data", dir, "-store", url}, &out, io.Discard); err != nil {
		t.Fatalf("migrate again, to finish the half-done run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "already") || !strings.Contains(out.String(), "size 5") {
		t.Errorf("the second run does not say the ledger was already copied:\n%s", out.String())
	}
	out.Reset()
	if err := run([]string{"check", "-data", dir, "-ledger", url}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "log size 5") {
		t.Fatalf("check of the PostgreSQL log: %v %q", err, out.String())
	}

	// A replica writes to the log; the file is now behind it.
	q := startServer(t, dir, "-store", url)
	if status, body := q.post(5); status != 201 {
		t.Fatalf("post on PostgreSQL: %d %s", status, body)
	}
	q.stop(t)
	out.Reset()
	err := run([]string{"migrate", "-data", dir, "-store", url}, &out, io.Discard)
	if err == nil {
		t.Fatalf("migrate into a log a replica has written to succeeded:\n%s", out.String())
	} else if !strings.Contains(err.Error(), "empty log only") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	out.Reset()
	if err := run([]string{"check", "-data", dir, "-ledger", url}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "log size 6") {
		t.Fatalf("the refused migrate changed the log: %v %q", err, out.String())
	}
}

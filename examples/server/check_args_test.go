package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestCheckRefusesAnArgument: "server check -data DIR backup.db" (the
// file as an argument, not -ledger) checked the data directory's own
// ledger.db instead and printed "ledger.Check passed" and exit 0, which
// reads as the backup verified. Like backup, accounts and the server,
// check (and migrate) refuse an argument they do not take.
func TestCheckRefusesAnArgument(t *testing.T) {
	dir := t.TempDir()
	e, err := fiscal.New(fiscal.Config{Dir: dir, Accounts: fiscaltest.Accounts(fiscaltest.IrishSeller), Logger: fiscaltest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "-data", dir, "backup.db"}, {"migrate", "-data", dir, "-store", "postgres://127.0.0.1/x", "backup.db"}} {
		var out, errOut bytes.Buffer
		err := run(args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), `unexpected argument "backup.db"`) {
			t.Errorf("%q: %v\n%s", args, err, out.String())
		}
	}
}

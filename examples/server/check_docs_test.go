package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestCheckFindsARecordItsLeafDoesNotCommitTo: a ledger file whose stored
// record differs from what its receipt commits to is damage the server's
// -check full refuses at start ("restore the latest backup"), and every
// read of that record answers LEDGER_INTEGRITY. The check command, which
// the README has the operator run on a restored copy before starting it
// (and backup -o runs on every copy), must find it too, not pass the file.
func TestCheckFindsARecordItsLeafDoesNotCommitTo(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	cfg.Store = ""
	dir := cfg.Dir
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	ent, err := e.Ledger().Entry(res.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Another record stored under a valid receipt: the amount changed.
	forged := bytes.Replace(ent.Docs["record"], []byte(`"amountUsdc":"11.90"`), []byte(`"amountUsdc":"1.19"`), 1)
	const id = "x402-ffffffffffffffffffffffffffffffff"
	if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: id, Leaf: ent.Leaf,
		Docs: map[string][]byte{"record": forged, "ubl": ent.Docs["ubl"], fiscal.DocOpenings: ent.Docs[fiscal.DocOpenings]}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	full := cfg
	full.LedgerFullCheck = true
	if e, err := fiscal.New(full); err == nil {
		e.Close()
		t.Fatal("the server's full check at start passed the file")
	}
	var out, errOut bytes.Buffer
	err = runCheck([]string{"-data", dir}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "does not match the digest its leaf commits to") {
		t.Fatalf("check of a file the full start refuses: %v\n%s", err, out.String())
	}
}

package fiscal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestStoreErrorOfAHaltedLedger: a ledger stopped by a failed disk sync
// (ledger.HaltedError) is answered 503 DB_UNAVAILABLE, not LEDGER_INTEGRITY
// (whose remedy, a restore from a backup, would lose acknowledged records),
// with a Retry-After that does not invite a retry every second, and the
// ledger's error kept for the log.
func TestStoreErrorOfAHaltedLedger(t *testing.T) {
	sync := errors.New("fdatasync: input/output error")
	fe := fiscal.StoreError(&ledger.HaltedError{Path: "/data/ledger.db", Err: sync})
	if fe.Code != fiscal.CodeDBUnavailable || fe.RetryAfter < time.Minute {
		t.Fatalf("halted ledger: %s, Retry-After %v; want DB_UNAVAILABLE and at least a minute", fe.Code, fe.RetryAfter)
	}
	var h *ledger.HaltedError
	if !errors.As(fe, &h) || !errors.Is(fe, sync) {
		t.Fatalf("the engine's error lost the ledger's: %v", fe)
	}
	// An ordinary unavailable store is still a retry in a second.
	if fe := fiscal.StoreError(ledger.ErrUnavailable); fe.Code != fiscal.CodeDBUnavailable || fe.RetryAfter != time.Second {
		t.Fatalf("unavailable ledger: %s, Retry-After %v", fe.Code, fe.RetryAfter)
	}
}

// TestReadsOfAnUnreadableLedgerAreNotNotFound: a receipt or its openings
// looked up by record id on a ledger that cannot be read (here closed; a
// halted one answers the same way) is DB_UNAVAILABLE, never NOT_FOUND: a
// client must not conclude that a settled payment does not exist.
func TestReadsOfAnUnreadableLedgerAreNotNotFound(t *testing.T) {
	books := benchEngine(t)
	res, err := books.Settle(context.Background(), benchRequest(1), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := books.Engine().Ledger().Close(); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() error{
		"Receipt by record id": func() error { _, err := books.Receipt(context.Background(), res.Record.ID); return err },
		"the public receipt by record id": func() error {
			_, err := books.Engine().Receipt(context.Background(), res.Record.ID)
			return err
		},
		"Openings": func() error { _, err := books.Openings(context.Background(), res.Record.ID); return err },
	} {
		var fe *fiscal.Error
		if err := read(); !errors.As(err, &fe) || fe.Code != fiscal.CodeDBUnavailable {
			t.Errorf("%s on a closed ledger: %v, want DB_UNAVAILABLE", name, err)
		}
	}
}

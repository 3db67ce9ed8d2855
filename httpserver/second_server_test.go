package httpserver_test

import (
	"errors"
	"testing"

	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestSecondServerNeedsTheRunningLoops: a server makes the webhook
// dispatcher and the ingest queue runner it is not given; a second server
// on the same engine would have started a second of each, racing the
// first over the outbox cursor and the queue. It is refused, with an error
// wrapping ledger.ErrReserved.
func TestSecondServerNeedsTheRunningLoops(t *testing.T) {
	f := newFixture(t) // its server runs the engine's dispatcher and queue
	file := testAccountsFile()
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	_, err = httpserver.New(httpserver.Services{Engine: f.engine, Keys: keys}, httpserver.Options{})
	if !errors.Is(err, ledger.ErrReserved) {
		t.Fatalf("a second server with its own loops: %v, want ledger.ErrReserved", err)
	}
}

package ingest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestSecondNewRefused: a second ingest.New that runs the queue on an
// engine whose queue already runs would start a second loop over the same
// durable queue; it is refused with an error saying so. A service that
// does not run the queue (NoQueue) may sit beside it.
func TestSecondNewRefused(t *testing.T) {
	e, err := fiscal.New(fiscal.Config{
		Dir: t.TempDir(), Accounts: fiscaltest.Accounts(irishSeller), Clock: time.Now,
		Rand: &fiscaltest.Rand{}, Logger: fiscaltest.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := ingest.New(e, ingest.Options{}); err != nil {
		t.Fatalf("the first ingest.New: %v", err)
	}
	if _, err := ingest.New(e, ingest.Options{}); err == nil {
		t.Fatal("a second ingest.New on the same engine started a second queue loop")
	} else {
		if !errors.Is(err, ledger.ErrReserved) {
			t.Errorf("the refusal does not wrap ledger.ErrReserved: %v", err)
		}
	}
	if _, err := ingest.New(e, ingest.Options{NoQueue: true}); err != nil {
		t.Fatalf("a service without the queue beside the running one: %v", err)
	}
}

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

// TestSecondNewRefused: a second ingest.Open that runs the queue on an
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
	if _, err := ingest.Open(e, ingest.Options{}); err != nil {
		t.Fatalf("the first ingest.Open: %v", err)
	}
	if _, err := ingest.Open(e, ingest.Options{}); err == nil {
		t.Fatal("a second ingest.Open on the same engine started a second queue loop")
	} else {
		if !errors.Is(err, ledger.ErrReserved) {
			t.Errorf("the refusal does not wrap ledger.ErrReserved: %v", err)
		}
	}
	if _, err := ingest.Open(e, ingest.Options{NoQueue: true}); err != nil {
		t.Fatalf("a service without the queue beside the running one: %v", err)
	}
}

// TestSecondNewPanics: New keeps its one-result signature for the program
// that opens one runner at start; a second runner on the engine is a
// programming error, and New panics with Open's refusal.
func TestSecondNewPanics(t *testing.T) {
	e, err := fiscal.New(fiscal.Config{
		Dir: t.TempDir(), Accounts: fiscaltest.Accounts(irishSeller), Clock: time.Now,
		Rand: &fiscaltest.Rand{}, Logger: fiscaltest.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if s := ingest.New(e, ingest.Options{}); s == nil {
		t.Fatal("the first ingest.New returned nil")
	}
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, ledger.ErrReserved) {
			t.Fatalf("a second ingest.New: recovered %v, want a panic with Open's error (ledger.ErrReserved)", r)
		}
	}()
	ingest.New(e, ingest.Options{})
}

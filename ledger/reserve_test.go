package ledger

import (
	"errors"
	"testing"
)

// TestReserve: a name is held by one user until released; others are told
// ErrReserved.
func TestReserve(t *testing.T) {
	l, _, _ := testLedger(t)
	release, err := l.Reserve("queue")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve("queue"); !errors.Is(err, ErrReserved) {
		t.Fatalf("second reserve: %v, want ErrReserved", err)
	}
	if r, err := l.Reserve("other"); err != nil {
		t.Fatalf("another name: %v", err)
	} else {
		r()
	}
	release()
	release() // idempotent: must not free a later holder's name
	again, err := l.Reserve("queue")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	release()
	if _, err := l.Reserve("queue"); !errors.Is(err, ErrReserved) {
		t.Fatalf("an old release freed the new holder's name: %v", err)
	}
	again()
}

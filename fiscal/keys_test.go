package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestRotateReceiptKey: after the operator's rotation step, receipts signed
// before it still verify (the retired key stays in the JWKS with its window),
// new receipts are signed by the new key, and a receipt whose iat falls
// after the retired key's window is refused.
func TestRotateReceiptKey(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	open, oldReceipt := rotationStart(t, dir, &now)

	now = now.Add(time.Hour)
	retired, active, err := fiscal.RotateReceiptKey(dir, now, nil)
	if err != nil || retired == active {
		t.Fatalf("rotate: %s → %s, %v", retired, active, err)
	}
	now = now.Add(time.Hour)
	e := open()
	defer e.Close()
	second, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), request(2, "10.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := e.JWKS()
	ks, err := receipt.ParseKeySet(jwks)
	if err != nil || len(ks.Keys) != 2 {
		t.Fatalf("JWKS after rotation: %v keys, %v", len(ks.Keys), err)
	}
	if _, err := receipt.Verify(oldReceipt, jwks, e.LogVerifierKey()); err != nil {
		t.Fatalf("a receipt signed before the rotation no longer verifies: %v", err)
	}
	newReceipt, _ := e.Receipt(context.Background(), second.Record.Receipt.ID)
	claims, err := receipt.Verify(newReceipt, jwks, e.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	k, err := ks.Lookup(active)
	if err != nil || !k.ValidAt(claims.IssuedAt) {
		t.Fatalf("new receipt not under the new key: %v", err)
	}
	if old, _ := ks.Lookup(retired); old.ValidAt(claims.IssuedAt) {
		t.Fatal("the retired key is still valid after its retirement")
	}
}

// TestRotateReceiptKeyInTheSecondOfTheLastReceipt: the operator's rotation
// runs once the server has stopped, which a script does at once; a receipt
// issued in the second of the rotation (iat = that second) must keep
// verifying: the retired key's window (nbf ≤ iat < exp) must hold it, as
// Keyring.Rotate promises for a receipt signed in the same second.
func TestRotateReceiptKeyInTheSecondOfTheLastReceipt(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 4, 13, 18, 0, 0, 200e6, time.UTC)
	open, last := rotationStart(t, dir, &now)

	now = now.Add(500 * time.Millisecond) // stopped, then rotated, in the same second
	if _, _, err := fiscal.RotateReceiptKey(dir, now, nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	e := open()
	defer e.Close()
	jwks, _ := e.JWKS()
	if _, err := receipt.Verify(last, jwks, e.LogVerifierKey()); err != nil {
		t.Fatalf("the last receipt before the rotation no longer verifies: %v", err)
	}
	second, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), request(2, "10.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	newReceipt, _ := e.Receipt(context.Background(), second.Record.Receipt.ID)
	if _, err := receipt.Verify(newReceipt, jwks, e.LogVerifierKey()); err != nil {
		t.Fatalf("a receipt after the rotation: %v", err)
	}
}

// rotationStart opens an engine on dir at the clock *now, records one
// settlement and closes it: open reopens the engine on dir, receipt is the
// settlement's receipt.
func rotationStart(t *testing.T, dir string, now *time.Time) (open func() *fiscal.Engine, receipt []byte) {
	t.Helper()
	open = func() *fiscal.Engine {
		e, err := fiscal.New(fiscal.Config{Dir: dir, Accounts: fiscaltest.Accounts(irishSeller), Rand: &fiscaltest.Rand{},
			Clock: func() time.Time { return *now }, Logger: fiscaltest.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	defer e.Close()
	first, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), request(1, "10.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	receipt, err = e.Receipt(context.Background(), first.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	return open, receipt
}

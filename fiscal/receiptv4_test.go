package fiscal_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestEngineIssuesV4AndServesOlderLeaves: a settlement's receipt is a
// 4.0.0 document (payload, no JWS) proven against the checkpoint of its
// commit, which the active receipt key cosigns; a 3.0.0 JWS leaf in the
// same log (a receipt issued before the upgrade) is still served as the
// 3.0.0 document it was, and both verify with the engine's key set.
func TestEngineIssuesV4AndServesOlderLeaves(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	e, err := fiscal.New(fiscal.Config{Dir: dir, Accounts: fiscaltest.Accounts(irishSeller), Rand: &fiscaltest.Rand{},
		Clock: func() time.Time { return now }, Logger: fiscaltest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, request(1, "10.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := e.Receipt(ctx, res.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	var r receipt.Receipt
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatal(err)
	}
	if r.Spec != receipt.SpecV4 || r.JWS != "" || r.Payload == "" {
		t.Fatalf("served %s with jws %q, payload %d bytes: want a 4.0.0 payload document", r.Spec, r.JWS, len(r.Payload))
	}
	jwks, _ := e.JWKS()
	ks, _ := receipt.ParseKeySet(jwks)
	kid := ks.Keys[len(ks.Keys)-1].Kid
	if !strings.Contains(r.TlogProof, "\n— "+kid+" ") {
		t.Errorf("the checkpoint is not cosigned by the receipt key %s:\n%s", kid, r.TlogProof)
	}
	claims, err := receipt.Verify(doc, jwks, e.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	if claims.Log.Index != res.Record.Ledger.Index {
		t.Errorf("verified index %d, the record says %d", claims.Log.Index, res.Record.Ledger.Index)
	}
	ent, err := e.Ledger().EntryAt(res.Record.Ledger.Index)
	if err != nil || !receipt.IsLeafV4(ent.Leaf) {
		t.Fatalf("the leaf is not the 4.0.0 payload: %v %.40q", err, ent.Leaf)
	}

	// A 3.0.0 receipt as the engine signed them before 4.0.0: the same
	// public claims under another id, signed with the keyring, its JWS the
	// leaf.
	keys, err := receipt.OpenKeyring(filepath.Join(dir, "keys"), receipt.EnvProduction, now, &fiscaltest.Rand{})
	if err != nil {
		t.Fatal(err)
	}
	c3 := *claims
	c3.Spec = receipt.SpecV3
	c3.EventID = "x402-" + strings.Repeat("3", 32)
	c3.ReceiptID = "rcpt_" + c3.EventID
	jws, err := keys.Sign(c3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: c3.EventID, Leaf: []byte(jws), Docs: map[string][]byte{"record": []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	old, err := e.Receipt(ctx, c3.ReceiptID)
	if err != nil {
		t.Fatal(err)
	}
	var r3 receipt.Receipt
	if err := json.Unmarshal(old, &r3); err != nil || r3.Spec != receipt.SpecV3 || r3.JWS != jws || r3.Payload != "" {
		t.Fatalf("served %s (jws %v): want the 3.0.0 document of the JWS leaf", r3.Spec, r3.JWS == jws)
	}
	if _, err := receipt.Verify(old, jwks, e.LogVerifierKey()); err != nil {
		t.Fatalf("the 3.0.0 receipt under a cosigned checkpoint: %v", err)
	}
	// The 4.0.0 receipt is served as before.
	if again, err := e.Receipt(ctx, res.Record.Receipt.ID); err != nil || string(again) != string(doc) {
		t.Errorf("the 4.0.0 receipt changed: %v", err)
	}
}

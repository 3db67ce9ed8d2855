package fiscalevent

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/vat"
)

// legacyBodies are fiscal event bodies whose Idempotency-Key fingerprint,
// as stored before the fingerprint covered only the request (the whole
// matched seller, its profile included, and the description the profile
// defaults), is written beside each: those stored keys must keep matching
// a retry of their request while the profile is unchanged.
var legacyBodies = []struct{ body, fp string }{
	{`{"payment":{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"},"seller":{"legalName":"Demo Ltd","country":"IE"},"buyer":{"country":"DE","businessStatus":"B2C"},"supply":{"kind":"digital_service"}}`, "cd3cb5b09c942325b6f40286c20e8bfa0eb5f4549c4480acd77222ea1c8203e6"},
	{`{"payment":{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"},"seller":{"legalName":"Other Seller SARL","country":"FR","overThreshold":true},"buyer":{"country":"DE","businessStatus":"B2C"},"supply":{"kind":"digital_service","description":"API calls"}}`, "4dad25497f0bf930bf2df24fd81f00e6dca6aebca3ce925a49cb694a87b4e2f0"},
}

func legacyInput(t *testing.T, body string, edit func(*fiscal.Seller)) input {
	t.Helper()
	s := fiscal.Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true}
	edit(&s)
	seller, err := s.Normalised()
	if err != nil {
		t.Fatal(err)
	}
	var req Request
	if err := strictjson.Decode([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	in, err := req.validate(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), fiscal.Account{ID: "acct", Seller: seller}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestLegacyFingerprintKept: the fingerprint of the earlier form is
// computed as it was (so that a key stored with it still replays its
// request), and differs from the request's own fingerprint, which a
// change of the account's profile leaves unchanged.
func TestLegacyFingerprintKept(t *testing.T) {
	same := func(*fiscal.Seller) {}
	changed := func(s *fiscal.Seller) {
		s.ItemName, s.RateConditions, s.OverThreshold = "Something else", []string{"fr_press_cppap"}, false
		s.Registrations = []vat.Registration{{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"}}
	}
	for i, c := range legacyBodies {
		in := legacyInput(t, c.body, same)
		if got := hex.EncodeToString(in.legacyFingerprint()); got != c.fp {
			t.Errorf("body %d: legacy fingerprint %s, want the stored %s", i, got, c.fp)
		}
		if hex.EncodeToString(in.fingerprint()) == c.fp {
			t.Errorf("body %d: the request's fingerprint is the legacy one", i)
		}
		if hex.EncodeToString(in.fingerprint()) != hex.EncodeToString(legacyInput(t, c.body, changed).fingerprint()) {
			t.Errorf("body %d: the request's fingerprint depends on the account's profile", i)
		}
	}
}

// TestKeyStoredWithLegacyFingerprintReplays: an event whose
// Idempotency-Key was stored with the earlier fingerprint (committed here
// as Record committed it then) is replayed by a retry of its request, and
// the key with another request is still a conflict.
func TestKeyStoredWithLegacyFingerprintReplays(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	s := New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	b, err := e.Books(acct)
	if err != nil {
		t.Fatal(err)
	}
	var req Request
	body := strings.Replace(legacyBodies[0].body, `"legalName":"Demo Ltd"`, `"legalName":"`+fiscaltest.IrishSeller.LegalName+`"`, 1)
	if err := strictjson.Decode([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	now := e.Now().UTC()
	in, err := req.validate(now, b.Account(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !in.seller.IsAccount {
		t.Fatal("the request does not name the account's seller")
	}
	d, _, err := s.prepare(ctx, b.Account(), in, now)
	if err != nil {
		t.Fatal(err)
	}
	d.ClaimPayment("legacy-key", in.legacyFingerprint())
	stored, _, err := e.Commit(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	got, err := s.Record(ctx, acct, req, "legacy-key")
	if err != nil {
		t.Fatalf("a retry of the request under its legacy key: %v, want its replay", err)
	}
	if got.Outcome != fiscal.Replayed || string(got.JSON) != string(stored) || e.Ledger().Size() != size {
		t.Errorf("outcome %v, same document %t, %d entries written; want the stored event replayed", got.Outcome, string(got.JSON) == string(stored), e.Ledger().Size()-size)
	}
	other := req
	other.Payment.AmountUSDC = "99.00"
	if _, err := s.Record(ctx, acct, other, "legacy-key"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Errorf("another request under the legacy key: %v, want IDEMPOTENCY_CONFLICT", err)
	}
}

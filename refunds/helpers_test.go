package refunds_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// testEngine returns an engine on a temporary directory whose accounts are
// the given sellers (ids "acct_0", "acct_1", ...), with a fixed clock.
func testEngine(t testing.TB, now time.Time, sellers ...fiscal.Seller) *fiscal.Engine {
	t.Helper()
	return fiscaltest.Engine(t, fiscaltest.Config(t, now, sellers...))
}

var irishSeller = fiscaltest.IrishSeller

func request(n int, amount, country, timestamp string) fiscal.SettlementRequest {
	return fiscaltest.Request(n, amount, country, timestamp)
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func asError(err error, target **fiscal.Error) bool { return errors.As(err, target) }

func validateUBL(t *testing.T, files []string, peppol bool) { fiscaltest.ValidateUBL(t, files, peppol) }

var lawNow = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// lawEngine is an engine whose accounts are the invoicing-law table's
// sellers (ids LawSeller.ID), with the SYNTHETIC multi-currency rates and
// the table's registry.
func lawEngine(t testing.TB) *fiscal.Engine {
	t.Helper()
	var accounts []fiscal.Account
	for _, s := range fiscaltest.LawSellers() {
		accounts = append(accounts, fiscal.Account{ID: s.ID, Seller: s.Seller})
	}
	cfg := fiscaltest.Config(t, lawNow)
	cfg.Accounts = accounts
	cfg.FX = fiscaltest.SyntheticFX(t)
	cfg.VIES = fiscaltest.LawVIES(lawNow)
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	return fiscaltest.Engine(t, cfg)
}

// lawBooks are the books of the table's seller id on e.
func lawBooks(t *testing.T, e *fiscal.Engine, id string) *fiscal.Books {
	t.Helper()
	b, err := e.Books(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settleOK settles req and returns the record, failing on an error.
func settleOK(t *testing.T, b *fiscal.Books, req fiscal.SettlementRequest) *fiscal.Record {
	t.Helper()
	res, err := b.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Record
}

// benchEngine is an Irish seller's books for benchmarks.
func benchEngine(b testing.TB) *fiscal.Books {
	b.Helper()
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC),
		fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}))
	return fiscaltest.Books(b, e, 0)
}

// benchRequest is the n-th distinct settlement of a benchmark.
func benchRequest(n uint64) fiscal.SettlementRequest {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n)
	sum := sha256.Sum256(buf[:])
	return fiscal.SettlementRequest{
		AmountUSDC: "11.90", TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: []string{"DE", "FR", "IT", "ES"}[n%4],
	}
}

package returns_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// ossSeller is the demo Irish seller, over the Art. 59c threshold and
// registered for the Union OSS in Ireland.
func ossSeller() fiscal.Seller {
	s := fiscaltest.IrishSeller
	s.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
	}
	return s
}

// testNow is after Q1 2026 and its period-end publication (2026-03-31),
// within the embedded ECB series (to 2026-04-13).
var testNow = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// newBooks opens a real engine (bbolt file, keys, embedded ECB rates) with
// a fake VIES that confirms one French business.
func newBooks(t testing.TB, now time.Time) *fiscal.Books {
	t.Helper()
	b, _ := newBooksClock(t, now)
	return b
}

// newBooksClock is newBooks with a clock the test moves (set).
func newBooksClock(t testing.TB, now time.Time) (b *fiscal.Books, set func(time.Time)) {
	t.Helper()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	fake := vies.NewFake()
	fake.Set("FR40303265045", vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "FR", Number: "40303265045",
		Name: "SA EXEMPLE", Address: "12 RUE DE L'EXEMPLE\n75001 PARIS", RequestIdentifier: "WAPIFR", RequestDate: now})
	cfg := fiscaltest.Config(t, now, ossSeller())
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	cfg.NoBackground = true
	cfg.Clock = func() time.Time { return *clock.Load() }
	e := fiscaltest.Engine(t, cfg)
	return fiscaltest.Books(t, e, 0), func(at time.Time) { clock.Store(&at) }
}

// refund records a refund of amount USDC ("" for what remains).
func refund(t testing.TB, b *fiscal.Books, id, amount, key string) *refunds.Refund {
	t.Helper()
	res, err := refunds.Create(context.Background(), b, id, refunds.Request{AmountUSDC: amount, Reason: "test"}, key)
	if err != nil {
		t.Fatalf("refund %s of %s: %v", amount, id, err)
	}
	return res.Refund
}

// sale is one settlement of a test.
type sale struct {
	amount, country, kind, vatNumber, at string
}

// settle records the sales; n numbers the tx hashes from first.
func settle(t testing.TB, b *fiscal.Books, first int, sales ...sale) []*fiscal.Record {
	t.Helper()
	var out []*fiscal.Record
	for i, s := range sales {
		req := fiscaltest.Request(first+i, s.amount, s.country, s.at)
		req.SupplyKind = s.kind
		req.ConsumerVATNumber = s.vatNumber
		if s.country == "IT" && s.kind == "ebook" {
			req.RateConditions = []string{"it_isbn_issn"} // the publication has an ISBN
		}
		res, err := b.Settle(context.Background(), req, fmt.Sprintf("sale-%d", first+i))
		if err != nil {
			t.Fatalf("sale %d %+v: %v", first+i, s, err)
		}
		out = append(out, res.Record)
	}
	return out
}

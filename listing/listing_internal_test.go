package listing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
)

// TestListScanBudget: a selective filter over more postings than the scan
// budget yields short pages with has_more, and following them finds every
// match exactly once, newest first. (The budget is maxListScan in
// production; the test passes a small one to list, the function List calls
// with it.)
func TestListScanBudget(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	b := demoBooks(t, func() time.Time { return now })
	var want []string
	for n := 0; n < 40; n++ {
		country := "DE"
		if n%9 == 0 {
			country = "FR"
		}
		if id := settleDemo(t, b, n, country); country == "FR" {
			want = append(want, id)
		}
	}
	slices.Sort(want) // same createdAt: newest first is descending id
	slices.Reverse(want)
	q := Query{TaxingCountry: "FR", Limit: 3}
	var got []string
	short := 0
	for pages := 0; ; pages++ {
		p, err := list(context.Background(), b, q, 7)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pageIDs(t, p)...)
		if len(p.Data) < q.Limit && p.HasMore {
			short++
		}
		if !p.HasMore {
			break
		}
		q.Cursor = p.NextCursor
		if pages > 40 {
			t.Fatal("no end")
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if short == 0 {
		t.Errorf("no page was cut short by the budget; the test does not test it")
	}
}

// demoBooks is the books of one account over the threshold on a new engine
// reading clock.
func demoBooks(t *testing.T, clock func() time.Time) *fiscal.Books {
	t.Helper()
	e, err := fiscal.New(fiscal.Config{
		Dir:      t.TempDir(),
		Accounts: []fiscal.Account{{ID: "acct", Seller: fiscal.Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true}}},
		Clock:    clock,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	b, err := e.Books("acct")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settleDemo settles payment n (its own transaction) for a consumer in
// country and returns the record's id.
func settleDemo(t *testing.T, b *fiscal.Books, n int, country string) string {
	t.Helper()
	sum := sha256.Sum256([]byte{byte(n >> 8), byte(n)})
	res, err := b.Settle(context.Background(), fiscal.SettlementRequest{
		AmountUSDC: "1.00", TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: evmverify.NetworkBase, ConsumerCountry: country,
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Record.ID
}

// pageIDs are the ids of a page's records, in its order.
func pageIDs(t *testing.T, p *Page) (out []string) {
	t.Helper()
	for _, raw := range p.Data {
		var r fiscal.Record
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.ID)
	}
	return out
}

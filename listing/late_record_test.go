package listing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
)

// TestWalkWithALateRecord: what a walk lists when a record whose createdAt
// is older than the walk's cursor is committed during it (createdAt is read
// when a record is decided, so concurrent requests can commit out of its
// order; a review staged it with the clock). Every record committed before
// the first page is listed once, in createdAt order; the late record is
// not in this walk (it sorts behind the cursor) and is in the next walk
// from the top, in its place. Listing's Query documents both, and points a
// follower of new records at the events, which keep the log's order.
func TestWalkWithALateRecord(t *testing.T) {
	var clock atomic.Int64
	base := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	e, err := fiscal.New(fiscal.Config{
		Dir:      t.TempDir(),
		Accounts: []fiscal.Account{{ID: "acct", Seller: fiscal.Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true}}},
		Clock:    func() time.Time { return base.Add(time.Duration(clock.Load()) * time.Second) },
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
	settle := func(at int64, n int) string {
		clock.Store(at)
		sum := sha256.Sum256([]byte{byte(n)})
		res, err := b.Settle(context.Background(), fiscal.SettlementRequest{
			AmountUSDC: "1.00", TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: "2026-04-10T14:30:00Z",
			PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
			Network: evmverify.NetworkBase, ConsumerCountry: "DE",
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		return res.Record.ID
	}
	ids := func(p *Page) (out []string) {
		for _, raw := range p.Data {
			var r fiscal.Record
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.ID)
		}
		return out
	}
	var all []string
	for i, at := range []int64{100, 200, 300, 400} {
		all = append(all, settle(at, i))
	}
	p1, err := List(context.Background(), b, Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	walked := ids(p1)
	// The request begun at 350 is committed only now.
	late := settle(350, 9)
	all = append(all, late)
	q := Query{Limit: 2, Cursor: p1.NextCursor}
	for p1.HasMore {
		p, err := List(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, ids(p)...)
		p1, q.Cursor = p, p.NextCursor
	}
	want := []string{all[3], all[2], all[1], all[0]} // committed before the first page, newest first
	if !slices.Equal(walked, want) {
		t.Fatalf("the walk listed %v, want the records committed before its first page once each, newest first: %v", walked, want)
	}
	var fresh []string
	for q := (Query{Limit: 2}); ; {
		p, err := List(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, ids(p)...)
		if !p.HasMore {
			break
		}
		q.Cursor = p.NextCursor
	}
	if want := []string{all[3], late, all[2], all[1], all[0]}; !slices.Equal(fresh, want) {
		t.Fatalf("the next walk listed %v, want every record in createdAt order: %v", fresh, want)
	}
}

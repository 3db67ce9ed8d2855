package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/parties"
)

// FuzzListQuery: any query string parses (parseListQuery, as GET
// /settlements and GET /v1/fiscal-events parse it) to a query the books
// accept or to a BAD_REQUEST naming a parameter; any cursor is refused or
// read, never a panic or a page of another account's records, or of the
// other kind of record.
func FuzzListQuery(f *testing.F) {
	e := fiscaltest.Engine(f, fiscaltest.Config(f, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC),
		fiscaltest.IrishSeller,
		fiscal.Seller{LegalName: "Seller B GmbH", VATNumber: "DE136695976", LegalID: "HRB 12345", Country: "DE", OverThreshold: true}))
	events := fiscalevent.New(e)
	ctx := context.Background()
	n := 0
	for acct, countries := range [][]string{{"DE", "FR", "EL"}, {"IT", "FR"}} {
		books := fiscaltest.Books(f, e, acct)
		for _, cc := range countries {
			n++
			if _, err := books.Settle(ctx, fiscaltest.Request(n, "1.00", cc, "2026-04-10T14:30:00Z"), ""); err != nil {
				f.Fatal(err)
			}
		}
		n++
		r := fiscaltest.Request(n, "1.00", "", "2026-04-11T09:00:00Z")
		if _, err := events.Record(ctx, fiscaltest.AccountID(acct), fiscalevent.Request{
			Payment: fiscalevent.Payment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp,
				PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
			Seller: parties.Seller{LegalName: books.Account().Seller.LegalName, Country: books.Account().Seller.Country},
			Buyer:  parties.Buyer{Country: "DE"},
			Supply: parties.Supply{Kind: "digital_service"},
		}, ""); err != nil {
			f.Fatal(err)
		}
	}
	// Real cursors of both accounts: the other account's must not open its
	// records to acct_0.
	for acct := range 2 {
		p, err := listing.List(ctx, fiscaltest.Books(f, e, acct), listing.Query{Limit: 1})
		if err != nil || p.NextCursor == "" {
			f.Fatal(err, p)
		}
		f.Add("limit=1&cursor=" + url.QueryEscape(p.NextCursor))
	}
	f.Add("limit=2&from=2026-04-10&to=2026-04-11T00:00:00Z&reviewStatus=PROCESSED&taxingCountry=EL")
	f.Add("cursor=AQAAAAAAAAAAeDQwMi0x&settledFrom=2026-01-01")
	f.Add("cursor=%00%01&limit=-1")
	f.Add("status=DETERMINED&settledTo=2026-04-11")
	f.Add("limit=2&limit=3&=x")
	books := fiscaltest.Books(f, e, 0)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseListQuery(v)
		if err != nil {
			checkBadRequest(t, raw, err)
			return
		}
		for _, object := range []string{fiscal.ObjectSettlement, fiscal.ObjectFiscalEvent} {
			var p *listing.Page
			if object == fiscal.ObjectSettlement {
				p, err = listing.List(ctx, books, q)
			} else {
				p, err = events.List(ctx, fiscaltest.AccountID(0), q)
			}
			if err != nil {
				checkBadRequest(t, raw, err)
				continue
			}
			if len(p.Data) > maxListLimit || q.Limit > 0 && len(p.Data) > q.Limit || p.HasMore != (p.NextCursor != "") {
				t.Fatalf("query %q: page of %d, has_more %v, next_cursor %q", raw, len(p.Data), p.HasMore, p.NextCursor)
			}
			for _, doc := range p.Data {
				var d struct{ Object, Account string }
				if err := json.Unmarshal(doc, &d); err != nil {
					t.Fatal(err)
				}
				if d.Account != fiscaltest.AccountID(0) || d.Object != object {
					t.Fatalf("query %q: listing acct_0's %ss served a %s of %s", raw, object, d.Object, d.Account)
				}
			}
		}
	})
}

// checkBadRequest asserts that err is a BAD_REQUEST naming the parameter.
func checkBadRequest(t *testing.T, raw string, err error) {
	t.Helper()
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field == "" || fe.Detail == "" {
		t.Fatalf("query %q: %v", raw, err)
	}
}

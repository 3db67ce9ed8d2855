package fiscal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// TestEU27 checks the member-state table against the countries of package
// vat's rate table, which covers the EU-27 and the United Kingdom.
func TestEU27(t *testing.T) {
	var fromVAT []string
	for _, c := range vat.Rates().Countries() {
		if c != "GB" {
			fromVAT = append(fromVAT, c)
		}
	}
	var ours []string
	for c := range eu27Countries {
		ours = append(ours, c)
	}
	slices.Sort(ours)
	if !slices.Equal(ours, fromVAT) {
		t.Fatalf("eu27Countries %v\nvat rate table %v", ours, fromVAT)
	}
	for c, want := range map[string]bool{"EL": true, "GR": true, "DE": true, "GB": false, "XI": false, "CH": false, "": false, "de": false} {
		if inEU27(c) != want {
			t.Errorf("inEU27(%q) = %v", c, !want)
		}
	}
}

// TestDetermineWithUnknowns: unknown Art. 59c facts become a manual review
// exactly when they change the answer.
func TestDetermineWithUnknowns(t *testing.T) {
	on := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	yes, no := true, false
	cases := []struct {
		name    string
		seller  sellerFacts
		buyer   string
		status  string
		regime  string
		country string
	}{
		{"EU seller, cross-border B2C, threshold unknown", sellerFacts{Country: "FR"}, "DE", vat.StatusManualReview, "", ""},
		{"EU seller, cross-border B2C, above", sellerFacts{Country: "FR", OverThreshold: &yes}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, cross-border B2C, below, not opted", sellerFacts{Country: "FR", OverThreshold: &no, OptedForDestination: &no}, "DE", vat.StatusDetermined, vat.RegimeDomestic, "FR"},
		{"EU seller, below, option unknown", sellerFacts{Country: "FR", OverThreshold: &no}, "DE", vat.StatusManualReview, "", ""},
		{"EU seller, opted, threshold unknown", sellerFacts{Country: "FR", OptedForDestination: &yes}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, domestic sale: threshold irrelevant", sellerFacts{Country: "FR"}, "FR", vat.StatusDetermined, vat.RegimeDomestic, "FR"},
		{"EU seller with a second establishment: no threshold", sellerFacts{Country: "FR", OtherEstablishments: []string{"IT"}}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"non-EU seller: no threshold", sellerFacts{Country: "US"}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, buyer outside the EU", sellerFacts{Country: "FR"}, "US", vat.StatusDetermined, vat.RegimeOutsideScope, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := determineWithUnknowns(tc.seller, vat.Buyer{Country: tc.buyer}, vat.Supply{Kind: vat.KindDigitalService, Date: on})
			if d.Status != tc.status || d.Regime != tc.regime && tc.status == vat.StatusDetermined || d.TaxingCountry != tc.country && tc.status == vat.StatusDetermined {
				t.Fatalf("%s %s %s %v", d.Status, d.Regime, d.TaxingCountry, d.Reasons)
			}
			if tc.status == vat.StatusManualReview {
				if len(d.Reasons) == 0 || d.Reasons[0].Code != ReasonSellerThresholdUnknown {
					t.Errorf("reasons %v", d.Reasons)
				}
				if d.Category != "" || d.RatePercent != nil || d.RateSource != nil || d.InvoiceNote != "" || d.Regime != "" || d.TaxingCountry != "" {
					t.Errorf("a manual review keeps invoice fields or a regime both answers do not share: %+v", d)
				}
				for _, r := range d.Reasons {
					if r.Code == vat.ReasonOriginTaxation {
						t.Errorf("the manual review asserts origin taxation")
					}
				}
			}
		})
	}
}

// internalEngine is an engine for the package's own tests.
func internalEngine(t testing.TB, now time.Time) *Engine {
	t.Helper()
	accounts, err := NewAccounts([]Account{{
		ID: "acct", KeyHashes: []string{HashKey("k")},
		Seller: Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{
		DataDir: t.TempDir(), Accounts: accounts,
		Clock:  func() time.Time { return now },
		Rand:   &streamRand{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// streamRand is a deterministic byte stream: SHA-256 in counter mode.
type streamRand struct {
	n   uint64
	buf []byte
}

func (r *streamRand) Read(p []byte) (int, error) {
	for i := range p {
		if len(r.buf) == 0 {
			sum := sha256.Sum256(fmt.Appendf(nil, "stream %d", r.n))
			r.n++
			r.buf = sum[:]
		}
		p[i], r.buf = r.buf[0], r.buf[1:]
	}
	return len(p), nil
}

func internalRequest(n int, country string) SettlementRequest {
	sum := sha256.Sum256([]byte{byte(n >> 8), byte(n)})
	return SettlementRequest{
		AmountUSDC: "1.00", TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: NetworkBase, ConsumerCountry: country,
	}
}

// TestListScanBudget: a selective filter over more postings than the scan
// budget yields short pages with has_more, and following them finds every
// match exactly once.
func TestListScanBudget(t *testing.T) {
	e := internalEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	var want []string
	for n := 0; n < 40; n++ {
		country := "DE"
		if n%9 == 0 {
			country = "FR"
		}
		res, err := e.Settle(context.Background(), "acct", internalRequest(n, country), "")
		if err != nil {
			t.Fatal(err)
		}
		if country == "FR" {
			want = append(want, res.Record.ID)
		}
	}
	slices.Sort(want) // same createdAt: newest first is descending id
	slices.Reverse(want)
	q := ListQuery{TaxingCountry: "FR", Limit: 3}
	var got []string
	short := 0
	for pages := 0; ; pages++ {
		p, err := e.list(context.Background(), "acct", indexAccountTime, "settlement", q, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range p.Data {
			var r Record
			_ = json.Unmarshal(raw, &r)
			got = append(got, r.ID)
		}
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

// FuzzFiscalEventRequest: any body decodes and validates to a value or to an
// *Error with a request code and a field; nothing panics.
func FuzzFiscalEventRequest(f *testing.F) {
	f.Add([]byte(`{"payment":{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"},"seller":{"legalName":"Demo Ltd","country":"IE"},"buyer":{"country":"DE","businessStatus":"B2C"},"supply":{"kind":"digital_service"}}`))
	f.Add([]byte(`{"seller":{"legalName":"X","country":"FR","otherEstablishments":["DE","CH"],"overThreshold":true},"buyer":{"country":"EL","vatNumber":"EL094259216","businessStatus":"B2B","postalCode":"63086"}}`))
	f.Add([]byte(`{"buyer":{"country":"DE","country":"FR"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"payment":{"txhash":"0x1","extra":[{"a":1}]},"buyer":{"Country":"DE","x":1}}`))
	acc := &Account{ID: "acct", Seller: Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true}.normalised()}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeFiscalEventRequest(bytes.NewReader(body))
		if err == nil {
			var in fiscalEventInput
			in, err = req.validate(now, acc)
			if err == nil {
				if in.seller.Country == "" || in.s.TxHash == "" || in.s.SupplyKind == "" || (in.buyer.BusinessStatus != "B2C" && in.buyer.BusinessStatus != "B2B") {
					t.Fatalf("validated event lacks facts: %+v", in)
				}
				_ = in.fingerprint()
				return
			}
		}
		checkRequestError(t, err)
		var fe *Error
		if errors.As(err, &fe) && strings.HasPrefix(fe.Detail, "unknown field ") && !strings.HasPrefix(fe.Field, "/") {
			t.Fatalf("unknown member reported at %q: %s", fe.Field, fe.Detail)
		}
	})
}

// FuzzEvaluate: any body gives an evaluation or a request error.
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte(`{"seller":{"country":"FR","overThreshold":true},"buyer":{"country":"DE"},"supply":{"kind":"digital_service"},"amountUsdc":"11.90","date":"2026-04-10"}`))
	f.Add([]byte(`{"seller":{"country":"US"},"buyer":{"country":"ES","postalCode":"35001"},"supply":{"kind":"ebook"},"amountUsdc":"0.000001","date":"2026-04-10T23:59:59Z","currency":"USDC"}`))
	f.Add([]byte(`{"buyer":{"country":"US"},"supply":{"kind":"x"},"amountUsdc":"1"}`))
	e := internalEngine(f, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeEvaluateRequest(bytes.NewReader(body))
		if err == nil {
			var ev *Evaluation
			ev, err = e.Evaluate(context.Background(), "", "", req)
			if err == nil {
				if !inEU27(ev.Buyer.Country) || ev.Recorded || ev.Determination.Status == "" {
					t.Fatalf("evaluation %+v", ev)
				}
				if !ev.Determination.Determined() && (ev.FX.VATEUR != "" || ev.Determination.RatePercent != nil) {
					t.Fatalf("a manual review states VAT: %+v", ev)
				}
				return
			}
		}
		checkRequestError(t, err)
	})
}

// FuzzListQuery: any query string parses to a query the engine accepts or to
// a BAD_REQUEST naming a parameter; any cursor is refused or read, never a
// panic or a page of another account.
func FuzzListQuery(f *testing.F) {
	f.Add("limit=2&from=2026-04-10&to=2026-04-11T00:00:00Z&reviewStatus=PROCESSED&taxingCountry=EL")
	f.Add("cursor=AQAAAAAAAAAAeDQwMi0x&settledFrom=2026-01-01")
	f.Add("cursor=%00%01&limit=-1")
	e := internalEngine(f, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	if _, err := e.Settle(context.Background(), "acct", internalRequest(1, "DE"), ""); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseListQuery(v)
		if err == nil {
			var p *Page
			if p, err = e.ListSettlements(context.Background(), "acct", q); err == nil {
				if len(p.Data) > MaxListLimit || p.HasMore != (p.NextCursor != "") {
					t.Fatalf("page %+v", p)
				}
				return
			}
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Code != CodeBadRequest || fe.Field == "" {
			t.Fatalf("query %q: %v", raw, err)
		}
	})
}

// checkRequestError asserts that err is the error of a bad request: a
// BAD_REQUEST, UNSUPPORTED_* or UNSUPPORTED_JURISDICTION *Error.
func checkRequestError(t *testing.T, err error) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("not an *Error: %v", err)
	}
	if fe.Code != CodeBadRequest && !strings.HasPrefix(string(fe.Code), "UNSUPPORTED_") {
		t.Fatalf("code %s for a request problem: %v", fe.Code, err)
	}
	if fe.Detail == "" {
		t.Fatalf("no detail: %v", err)
	}
}

// FuzzSimulateRequest: any body decodes and validates (settlement fields and
// the optional seller) to a value or a request error naming a body field.
func FuzzSimulateRequest(f *testing.F) {
	f.Add([]byte(`{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}`))
	f.Add([]byte(`{"amountUsdc":1,"seller":{"legalName":"X","country":"FR","vatNumber":"FR40303265045"}}`))
	f.Add([]byte(`{"seller":{"legalName":"X","country":"FR","address":{"city":1}}}`))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	e := &Engine{accounts: &Accounts{byID: map[string]int{}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeSimulateRequest(bytes.NewReader(body))
		if err == nil {
			if _, err = e.sandboxAccount("", req.Seller); err == nil {
				if _, err = req.SettlementRequest.validate(now); err == nil {
					return
				}
			}
		}
		checkRequestError(t, err)
		var fe *Error
		if errors.As(err, &fe) && strings.Contains(fe.Field, "SettlementRequest") {
			t.Fatalf("field %q names the Go type", fe.Field)
		}
	})
}

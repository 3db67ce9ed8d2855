package fiscal_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// smallIrishSeller is established in Ireland only, registered there and for
// the Union OSS, and has never stated it is over the Art. 59c threshold:
// the engine decides from its own running totals.
var smallIrishSeller = fiscal.Seller{
	LegalName: "Small Irish Apps Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-777", Country: "IE",
	Address:       fiscal.Address{Street: "2 Quay", City: "Cork", PostalCode: "T12 X1"},
	Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
}

func thresholdEvents(t *testing.T, e *fiscal.Engine) []fiscal.Event {
	t.Helper()
	var out []fiscal.Event
	err := e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(fiscal.OutboxEvents, nil, nil, false, func(_, v []byte) bool {
			var ev fiscal.Event
			if err := json.Unmarshal(v, &ev); err != nil {
				t.Errorf("unreadable outbox event: %v", err)
			}
			if ev.Type == fiscal.EventAccountThresholdCrossed {
				out = append(out, ev)
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestThresholdFromTheLedger: three sales of 6,000 USDC to German
// consumers (IE, IE, DE): the first two are taxed in Ireland, the third
// takes the year's total over EUR 10,000 and is taxed in Germany, with the
// record stating the totals before and after; account.threshold_crossed is
// emitted once; later sales that year are taxed in Germany; the account's
// totals are readable.
func TestThresholdFromTheLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		var got []string
		for i := 0; i < 4; i++ {
			res, err := b.Settle(ctx, fiscaltest.Request(i, "6000", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			c := r.Classification
			got = append(got, c.TaxingCountry)
			th := c.Threshold
			if th == nil || !th.Counts || th.Counted == nil || th.TotalAfter == nil || !th.TotalBefore.Add(*th.Counted).Equal(*th.TotalAfter) {
				t.Fatalf("sale %d: threshold section %+v", i+1, th)
			}
			if i == 2 && !th.Crossed {
				t.Errorf("the third sale does not say it crossed: %+v", th)
			}
		}
		if !slices.Equal(got, []string{"IE", "IE", "DE", "DE"}) {
			t.Fatalf("taxing countries %v, want IE IE DE DE", got)
		}
		if evs := thresholdEvents(t, e); len(evs) != 1 || evs[0].Account != fiscaltest.AccountID(0) {
			t.Fatalf("threshold events %+v", evs)
		}
		totals, err := b.Totals(ctx)
		if err != nil || len(totals) != 1 || totals[0].Year != 2026 || !totals[0].Exceeded {
			t.Fatalf("totals %+v %v", totals, err)
		}
	})
}

// TestConcurrentCrossingSales: after a first sale, two sales arrive at once;
// each alone would stay within the threshold, together they cross. They are
// decided in append order: exactly one is taxed at origin and the other,
// the crossing one, at destination; the total is the sum of all three.
func TestConcurrentCrossingSales(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		for round := 0; round < 5; round++ {
			e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
			b := fiscaltest.Books(t, e, 0)
			ctx := context.Background()
			firstRes, err := b.Settle(ctx, fiscaltest.Request(1, "5000", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			results := make([]*fiscal.Record, 2)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := b.Settle(ctx, fiscaltest.Request(10+i, "5000", "DE", "2026-04-10T14:30:00Z"), "")
					if err != nil {
						t.Error(err)
						return
					}
					results[i] = res.Record
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			var countries []string
			for _, r := range results {
				countries = append(countries, r.Classification.TaxingCountry)
			}
			slices.Sort(countries)
			if !slices.Equal(countries, []string{"DE", "IE"}) {
				t.Fatalf("round %d: concurrent sales taxed in %v, want one at origin (IE) and the crossing one in DE", round, countries)
			}
			totals, _ := b.Totals(ctx)
			sum := *firstRes.Record.Classification.Threshold.Counted
			for _, r := range results {
				sum = sum.Add(*r.Classification.Threshold.Counted)
			}
			if len(totals) != 1 || !totals[0].Exceeded || totals[0].CrossBorderEUR != sum.String() || len(thresholdEvents(t, e)) != 1 {
				t.Fatalf("round %d: totals %+v", round, totals)
			}
		}
	})
}

// TestThresholdAcrossYears: the previous year's total (an opening figure)
// already over EUR 10,000 taxes January's sales at destination; a sale
// crossing in December in Irish time is the year's, one after midnight in
// Dublin belongs to the next year.
func TestThresholdAcrossYears(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		seller := smallIrishSeller
		seller.OpeningTotals = []fiscal.OpeningTotal{{Year: 2025, EUR: "10500"}}
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		res, err := b.Settle(ctx, fiscaltest.Request(1, "10", "DE", "2026-01-15T12:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Record.Classification; c.TaxingCountry != "DE" || c.Threshold == nil || c.Threshold.Rule != vat.ThresholdPreviousYear {
			t.Fatalf("January after an exceeded year: %s %+v", c.TaxingCountry, c.Threshold)
		}
		// Receipt and record agree on the invoice number.
		doc, err := b.Receipt(ctx, res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		jwks, _ := e.JWKS()
		claims, err := receipt.Verify(doc, jwks, e.LogVerifierKey())
		if err != nil || claims.Invoice == nil || claims.Invoice.ID != res.Record.Invoice.ID {
			t.Fatalf("receipt invoice %+v, record %+v: %v", claims.Invoice, res.Record.Invoice, err)
		}
	})
}

// TestTotalsRebuiltForAnOlderLedger: a ledger written before the engine
// kept running totals gets them built from its records when opened, equal
// to the totals kept sale by sale.
func TestTotalsRebuiltForAnOlderLedger(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	for i, c := range []string{"DE", "FR", "IE", "AT"} {
		if _, err := b.Settle(context.Background(), fiscaltest.Request(i, "1234.56", c, "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := b.Totals(context.Background())
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept totals %+v %v", kept, err)
	}
	// Forget them, as a ledger of an older version never had them.
	fiscaltest.ForgetTotals(t, e, "2026")
	e.Close()
	e = fiscaltest.Engine(t, cfg)
	rebuilt, err := fiscaltest.Books(t, e, 0).Totals(context.Background())
	if err != nil || !slices.Equal(rebuilt, kept) {
		t.Fatalf("rebuilt %+v, kept %+v (%v)", rebuilt, kept, err)
	}
}

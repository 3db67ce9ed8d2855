package fiscal_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// BenchmarkListSettlements reads a page of 50 of 1,000 records, unfiltered
// and with a filter that keeps one record in four.
func BenchmarkListSettlements(b *testing.B) {
	e := benchEngine(b)
	var wg sync.WaitGroup
	var next atomic.Uint64
	for c := 0; c < 32; c++ { // concurrent callers share commits: a quick setup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= 1000; n = next.Add(1) {
				if _, err := e.Settle(context.Background(), "acct", benchRequest(n), ""); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, q := range []fiscal.ListQuery{{Limit: 50}, {Limit: 50, TaxingCountry: "FR"}} {
		b.Run(fmt.Sprintf("taxingCountry=%q", q.TaxingCountry), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := e.ListSettlements(context.Background(), "acct", q)
				if err != nil || len(p.Data) != 50 {
					b.Fatal(err, len(p.Data))
				}
			}
		})
	}
}

// BenchmarkEvaluate measures the classification preview, unmetered (the
// metered call adds one fsynced quota update).
func BenchmarkEvaluate(b *testing.B) {
	e := benchEngine(b)
	req := fiscal.EvaluateRequest{
		Seller: &fiscal.EventSeller{Country: "US"}, Buyer: fiscal.EventBuyer{Country: "DE"},
		Supply: fiscal.EventSupply{Kind: "digital_service"}, AmountUSDC: "11.90", Date: "2026-04-10",
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := e.Evaluate(context.Background(), "", "", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordFiscalEvent measures durable fiscal events with a
// production receipt, one caller at a time (each waits for its fsync).
func BenchmarkRecordFiscalEvent(b *testing.B) {
	e := benchEngine(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := benchRequest(uint64(i))
		ev, err := e.RecordFiscalEvent(context.Background(), "acct", fiscal.FiscalEventRequest{
			Payment: fiscal.EventPayment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp,
				PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
			Seller: fiscal.EventSeller{LegalName: "Bench Ltd", Country: "IE"},
			Buyer:  fiscal.EventBuyer{Country: r.ConsumerCountry},
			Supply: fiscal.EventSupply{Kind: "digital_service"},
		}, "")
		if err != nil || !ev.Event.Production.Receipt {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulate measures a sandbox simulation (sandbox append and
// receipt assembly), unmetered.
func BenchmarkSimulate(b *testing.B) {
	e := benchEngine(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := e.Simulate(context.Background(), "acct", "", fiscal.SimulateRequest{SettlementRequest: benchRequest(uint64(i))}); err != nil {
			b.Fatal(err)
		}
	}
}

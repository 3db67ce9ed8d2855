package rates_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/rates"
)

// polishSeller is the invoicing-law table's full Polish seller: its
// domestic sales state the VAT in PLN too (Art. 230 Directive 2006/112/EC;
// Polish VAT Act Art. 31a: the rate of the last working day before the
// chargeable event).
func polishSeller(t *testing.T) fiscal.Seller {
	return fiscaltest.LawSellerOf(t, "pl-full")
}

func reasonCodes(r *fiscal.Record) []string {
	var out []string
	for _, x := range r.ReviewReasons {
		out = append(out, x.Code)
	}
	return out
}

// TestNationalRateLatePublication (issue 18): records whose VAT must be
// stated in PLN wait for the zloty rate as records wait for the dollar
// one. (a) A sale at 10:00 UTC on 14 April 2026 has its USD rate (the 13
// April publication, embedded) but not the PLN rate of 13 April:
// national_rate_unavailable, queued. (b) A sale at 17:00 UTC has neither
// (the 14 April USD publication is due at 16:00 Frankfurt time):
// fx_rate_unavailable; when the USD rate alone arrives it keeps waiting (a
// revision without the zloty would only be pending again). When the feed
// publishes the zloty both are decided: PROCESSED, the VAT in PLN at the
// 13 April rate, the queue empty.
func TestNationalRateLatePublication(t *testing.T) {
	ecb := newECBServer(t)
	now := time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC)
	e, svc := engineOf(t, t.TempDir(), now, ecb, polishSeller(t))
	defer e.Close()
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()

	morning := settleRecord(t, books, fiscaltest.Request(1, "123.00", "PL", "2026-04-14T10:00:00Z"))
	evening := settleRecord(t, books, fiscaltest.Request(2, "123.00", "PL", "2026-04-14T17:00:00Z"))
	if got := reasonCodes(morning); morning.ReviewStatus != fiscal.StatusPendingReview || len(got) == 0 || got[len(got)-1] != invoicelaw.ReasonNationalRateUnavailable {
		t.Fatalf("morning sale: %s %v", morning.ReviewStatus, got)
	}
	if got := reasonCodes(evening); evening.ReviewStatus != fiscal.StatusPendingReview || got[0] != fiscal.ReasonFXRateUnavailable {
		t.Fatalf("evening sale: %s %v", evening.ReviewStatus, got)
	}
	if rep := svc.Report(); rep.Waiting != 2 {
		t.Fatalf("waiting %d, want both records queued (the PLN one too)", rep.Waiting)
	}

	// The dollar alone: neither record can be completed.
	ecb.publish("2026-04-14", "1.172513")
	waitFor(t, "the 14 April publication", func() bool { return svc.Report().Newest == "2026-04-14" })
	if n, err := rates.Retry(ctx, e); err != nil || n != 0 {
		t.Fatalf("Retry with the dollar alone revised %d (%v), want 0", n, err)
	}
	for _, id := range []string{morning.ID, evening.ID} {
		if r, _, err := books.Record(ctx, id); err != nil || r.Revision > 1 {
			t.Fatalf("%s revised without its zloty rate: %+v %v", id, r.History, err)
		}
	}
	if rep := svc.Report(); rep.Waiting != 2 {
		t.Fatalf("waiting %d after the dollar, want 2", rep.Waiting)
	}

	// The zloty of 13 April (the working day before the supply, Art. 31a).
	emb, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	usd13, err := emb.Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	if err != nil || usd13.RateDate != "2026-04-13" {
		t.Fatalf("embedded USD of 13 April: %+v %v", usd13, err)
	}
	ecb.publishRates("2026-04-13", "USD", usd13.Raw, "PLN", "4.2615")
	ecb.publishRates("2026-04-14", "PLN", "4.2633")
	for _, id := range []string{morning.ID, evening.ID} {
		var r *fiscal.Record
		waitFor(t, "the revision of "+id, func() bool {
			r, _, err = books.Record(ctx, id)
			return err == nil && r.Revision == 2
		})
		n := r.FX.National
		if r.ReviewStatus != fiscal.StatusProcessed || n == nil || n.Currency != "PLN" || n.Rate == nil || n.Rate.Raw != "4.2615" || n.Rate.RateDate != "2026-04-13" || r.Invoice == nil {
			t.Fatalf("%s after the zloty: %s %v national %+v", id, r.ReviewStatus, reasonCodes(r), n)
		}
		if h := r.History[1]; h.Cause != fiscal.CauseRatePublished || h.EventType != fiscal.EventSettlementProcessed {
			t.Errorf("%s revision %+v", id, h)
		}
		t.Logf("%s: VAT %s EUR = %s PLN at %s (%s), rule %s", id, r.FX.VATEUR, n.VAT, n.Rate.Raw, n.Rate.RateDate, n.Rule.ID)
	}
	waitFor(t, "the queue to empty", func() bool { return svc.Report().Waiting == 0 })
}

func settleRecord(t *testing.T, b *fiscal.Books, req fiscal.SettlementRequest) *fiscal.Record {
	t.Helper()
	res, err := b.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Record
}

// TestWaitingRecordCountedOnce: a small Polish seller's sale to a German
// consumer is taxed in Poland (Art. 59c, within the threshold) and its VAT
// must be stated in PLN; while the zloty rate is missing the record waits.
// Its value counts toward the seller's Art. 59c total exactly once: the
// running total after the re-decision equals the record's counted value,
// and equals what a rebuild from the ledger finds.
func TestWaitingRecordCountedOnce(t *testing.T) {
	ecb := newECBServer(t)
	seller := polishSeller(t)
	seller.OverThreshold = false
	e, svc := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC), ecb, seller)
	defer e.Close()
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	r := settleRecord(t, books, fiscaltest.Request(1, "1230.00", "DE", "2026-04-14T10:00:00Z"))
	if got := reasonCodes(r); r.ReviewStatus != fiscal.StatusPendingReview || r.Classification.TaxingCountry != "PL" {
		t.Fatalf("sale: %s %v taxed in %s", r.ReviewStatus, got, r.Classification.TaxingCountry)
	}
	before, _ := books.Totals(ctx)
	emb, _ := fx.Embedded()
	usd13, _ := emb.Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	ecb.publishRates("2026-04-13", "USD", usd13.Raw, "PLN", "4.2615")
	waitFor(t, "the revision", func() bool {
		r, _, _ = books.Record(ctx, r.ID)
		return r.Revision == 2
	})
	waitFor(t, "the queue to empty", func() bool { return svc.Report().Waiting == 0 })
	after, err := books.Totals(ctx)
	th := r.Classification.Threshold
	if err != nil || r.ReviewStatus != fiscal.StatusProcessed || th == nil || th.Counted == nil || len(after) != 1 || after[0].CrossBorderEUR != th.Counted.String() {
		t.Fatalf("totals before %+v, after %+v; record %s counted %+v", before, after, r.ReviewStatus, th)
	}
}

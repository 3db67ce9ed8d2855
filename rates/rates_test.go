package rates_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/rates"
)

// ecbServer is a local stand-in for the ECB's eurofxref feeds. SYNTHETIC
// data: the USD rates it publishes are invented (they have a sixth digit
// the ECB never writes for USD) and lie after the embedded series, which
// ends on 2026-04-13, so that they never contradict real publications.
type ecbServer struct {
	mu        sync.Mutex
	published map[string]map[string]string // date → currency → rate
	requests  int
	srv       *httptest.Server
}

func newECBServer(t *testing.T) *ecbServer {
	s := &ecbServer{published: map[string]map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *ecbServer) publish(date, usd string) { s.publishRates(date, "USD", usd) }

// publishRates adds currency/rate pairs to the publication of date.
func (s *ecbServer) publishRates(date string, pairs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.published[date] == nil {
		s.published[date] = map[string]string{}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		s.published[date][pairs[i]] = pairs[i+1]
	}
}

func (s *ecbServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- SYNTHETIC test feed: not ECB data -->
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
<gesmes:subject>Reference rates</gesmes:subject><gesmes:Sender><gesmes:name>SYNTHETIC</gesmes:name></gesmes:Sender><Cube>
`)
	for date, rates := range s.published {
		fmt.Fprintf(&b, "<Cube time='%s'>", date)
		for cur, rate := range rates {
			fmt.Fprintf(&b, "<Cube currency='%s' rate='%s'/>", cur, rate)
		}
		b.WriteString("</Cube>\n")
	}
	b.WriteString("</Cube></gesmes:Envelope>\n")
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(b.String()))
}

func (s *ecbServer) feeds() fx.Feeds {
	return fx.Feeds{Daily: s.srv.URL + "/daily.xml", Hist90d: s.srv.URL + "/hist-90d.xml", Hist: s.srv.URL + "/hist.xml"}
}

// engineWithRates opens an engine in dir whose rates are refreshed from
// ecb; the engine's clock is now.
func engineWithRates(t *testing.T, dir string, now time.Time, ecb *ecbServer) (*fiscal.Engine, *rates.Service) {
	t.Helper()
	return engineOf(t, dir, now, ecb, fiscaltest.IrishSeller)
}

// engineOf is engineWithRates for the seller given.
func engineOf(t *testing.T, dir string, now time.Time, ecb *ecbServer, seller fiscal.Seller) (*fiscal.Engine, *rates.Service) {
	t.Helper()
	base, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	live := fx.NewLiveTable(base)
	cfg := fiscaltest.Config(t, now, seller)
	cfg.Dir, cfg.FX = dir, live
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := rates.New(e, live, rates.Options{Feeds: ecb.feeds(), Client: ecb.srv.Client(), Logger: fiscaltest.Logger(),
		RetryMin: 5 * time.Millisecond, RetryMax: 40 * time.Millisecond})
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return e, svc
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLatePublicationProcessesPendingRecord: a settlement made before the
// ECB published its day's rate is pending (fx_rate_unavailable); when the
// local ECB server publishes, the refresh merges the rate, stores it in the
// ledger and the record becomes PROCESSED in a new revision with invoice,
// receipt and a settlement.processed event. After a restart with the ECB
// unreachable, the stored rate still serves.
func TestLatePublicationProcessesPendingRecord(t *testing.T) {
	ecb := newECBServer(t)
	dir := t.TempDir()
	now := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	e, svc := engineWithRates(t, dir, now, ecb)
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()

	res, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != fiscal.ReasonFXRateUnavailable || r.Invoice != nil {
		t.Fatalf("before publication: %s %v", r.ReviewStatus, r.ReviewReasons)
	}
	if rep := svc.Report(); rep.Waiting != 1 || !rep.Refresh {
		t.Fatalf("report before publication: %+v", rep)
	}

	ecb.publish("2026-04-14", "1.172513")
	var r *fiscal.Record
	waitFor(t, "the revision made with the published rate", func() bool {
		r, _, err = books.Record(ctx, res.Record.ID)
		return err == nil && r.Revision == 2
	})
	if r.ReviewStatus != fiscal.StatusProcessed || r.FX.USDPerEUR == nil || r.FX.USDPerEUR.Raw != "1.172513" || r.FX.USDPerEUR.RateDate != "2026-04-14" || r.Invoice == nil {
		t.Fatalf("after publication: %s %v fx %+v", r.ReviewStatus, r.ReviewReasons, r.FX.USDPerEUR)
	}
	if r.History[1].Cause != fiscal.CauseRatePublished || r.History[1].EventType != fiscal.EventSettlementProcessed {
		t.Errorf("revision %+v", r.History[1])
	}
	if _, _, err := books.Invoice(ctx, r.ID); err != nil {
		t.Errorf("invoice: %v", err)
	}
	waitFor(t, "the queue to empty", func() bool { return svc.Report().Waiting == 0 })
	if rep := svc.Report(); rep.Newest != "2026-04-14" {
		t.Errorf("report newest %s", rep.Newest)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart offline: the rate comes from the ledger, not the network.
	ecb.srv.Close()
	e, _ = engineWithRates(t, dir, now, ecb)
	defer e.Close()
	res, err = fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(2, "5.00", "DE", "2026-04-14T15:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusProcessed || res.Record.FX.USDPerEUR.Raw != "1.172513" {
		t.Fatalf("after a restart without the network: %s %v", res.Record.ReviewStatus, res.Record.ReviewReasons)
	}
	if _, err := e.Ledger().Get("fx-documents", []byte("ecb")); err != nil {
		t.Errorf("stored documents: %v", err)
	}
}

// TestNewRefusesAnotherTable: the refresh must extend the table the engine
// reads, or its rates would never reach a record.
func TestNewRefusesAnotherTable(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Now(), fiscaltest.IrishSeller))
	base, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rates.New(e, fx.NewLiveTable(base), rates.Options{}); err == nil {
		t.Fatal("a live table the engine does not read was accepted")
	}
}

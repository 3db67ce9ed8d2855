package httpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReadyAcrossTheLongestECBGap: with the default limit, /readyz stays
// ready across the longest regular gap between two ECB publications,
// which is five days, not four: Maundy Thursday (2026-04-02) to the Tuesday
// after Easter (2026-04-07), and 24 December on a Wednesday (2025) to the
// Monday after (both in the ECB data). At 16:05 Frankfurt time on that
// Tuesday the day's publication is due only now (the refresh fetches it
// after 16:00 plus its margin): no publication was missed, and every
// replica taking itself out of the load balancer at once would be an
// outage of the service.
func TestReadyAcrossTheLongestECBGap(t *testing.T) {
	for _, c := range []struct{ rates, now string }{
		{"date,usd_per_eur\n2026-03-31,1.1535\n2026-04-01,1.1605\n2026-04-02,1.1525\n", "2026-04-07T14:05:00Z"},
		{"date,usd_per_eur\n2025-12-22,1.1745\n2025-12-23,1.1786\n2025-12-24,1.1787\n", "2025-12-29T15:05:00Z"},
	} {
		table, err := fx.ParseCSV(strings.NewReader(c.rates), "file:test")
		if err != nil {
			t.Fatal(err)
		}
		now, _ := time.Parse(time.RFC3339, c.now)
		e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: testAccounts(t), FX: table, Clock: func() time.Time { return now }, Rand: &detRand{seed: "ready"}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(newHandler(t, e, httpserver.Options{RateLimit: rate.Inf, OperatorKey: operatorKey}))
		resp, err := srv.Client().Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var rd httpserver.Readiness
		err = json.NewDecoder(resp.Body).Decode(&rd)
		resp.Body.Close()
		srv.Close()
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || failing(rd, "fx") {
			t.Errorf("at %s with the rates up to the last publication: %d, fx check %+v", c.now, resp.StatusCode, check(rd, "fx"))
		}
	}
}

// TestReadyVATRateTable: /readyz fails its vat_rates check, naming the
// table and its last day, once the engine's day is past the rate table's
// coverage (every new settlement would wait for review), and passes on
// its last day; the remaining-time gauge says how long is left (until the
// first local midnight after it: TestReadyVATRateTableLocalDay).
func TestReadyVATRateTable(t *testing.T) {
	_, last := vat.Rates().Coverage()
	for _, c := range []struct {
		now   time.Time
		ready bool
	}{
		{last.Add(21 * time.Hour), true},
		{last.Add(24 * time.Hour), false},
	} {
		status, rd, metricsBody := probeAt(t, c.now)
		vr := check(rd, "vat_rates")
		if vr.OK != c.ready || (status == 200) != c.ready {
			t.Errorf("at %s: %d, vat_rates %+v; want ready %v", c.now.Format(time.RFC3339), status, vr, c.ready)
		}
		if !c.ready && (!strings.Contains(vr.Detail, vat.Rates().Version()) || !strings.Contains(vr.Detail, last.Format(time.DateOnly))) {
			t.Errorf("vat_rates detail %q names neither the table nor its last day", vr.Detail)
		}
		_, until := vat.Rates().CoveredEverywhere()
		left := until.Sub(c.now).Seconds()
		if want := fmt.Sprintf("fiscal402_vat_rate_table_remaining_seconds %g", left); !strings.Contains(string(metricsBody), want) {
			t.Errorf("at %s: no %q in the metrics", c.now.Format(time.RFC3339), want)
		}
		if want := fmt.Sprintf("fiscal402_vat_rate_table_info{sha256=%q,version=%q} 1", vat.Rates().Digest(), vat.Rates().Version()); !strings.Contains(string(metricsBody), want) {
			t.Errorf("no %s in the metrics", want)
		}
	}
}

// TestReadyVATRateTableLocalDay: the rate is chosen by the local day of
// the taxing member state (Art. 63 and 93 Directive 2006/112/EC; vat's
// localday.go), so the table's coverage ends, for a Finnish consumer, at
// midnight in Helsinki, two hours before midnight UTC. From the first
// instant at which a supply somewhere is dated after the table's last day,
// /readyz fails its vat_rates check, and the remaining-time gauge counts
// down to that instant, not to midnight UTC.
func TestReadyVATRateTableLocalDay(t *testing.T) {
	tbl := vat.Rates()
	_, last := tbl.Coverage()
	fi := func(at time.Time) vat.Determination {
		return tbl.Determine(vat.Input{Seller: vat.Seller{Country: "DE", OverThreshold: true}, Buyer: vat.Buyer{Country: "FI"},
			Supply: vat.Supply{Kind: vat.KindDigitalService, Date: at}})
	}
	outside := func(d vat.Determination) bool {
		for _, r := range d.Reasons {
			if r.Code == vat.ReasonDateOutsideRateTable {
				return true
			}
		}
		return false
	}
	// The instant the Finnish coverage ends, found by the engine's own
	// determination (minute by minute through the last UTC day).
	var end time.Time
	for at := last; at.Before(last.Add(24 * time.Hour)); at = at.Add(time.Minute) {
		if outside(fi(at)) {
			end = at
			break
		}
	}
	if end.IsZero() || !end.Before(last.Add(24*time.Hour)) {
		t.Fatalf("a Finnish supply stays covered through the last UTC day (end %v)", end)
	}
	for _, c := range []struct {
		now   time.Time
		ready bool
	}{
		{end.Add(-time.Minute), true},
		{end.Add(30 * time.Minute), false}, // a Finnish supply now waits for review
	} {
		if got := outside(fi(c.now)); got == c.ready {
			t.Fatalf("premise: a Finnish supply at %s outside the table: %v", c.now.Format(time.RFC3339), got)
		}
		status, rd, metricsBody := probeAt(t, c.now)
		if vr := check(rd, "vat_rates"); vr.OK != c.ready || (status == 200) != c.ready {
			t.Errorf("at %s: %d, vat_rates %+v; want ready %v", c.now.Format(time.RFC3339), status, vr, c.ready)
		}
		if want := fmt.Sprintf("fiscal402_vat_rate_table_remaining_seconds %g", end.Sub(c.now).Seconds()); !strings.Contains(string(metricsBody), want) {
			t.Errorf("at %s: no %q in the metrics", c.now.Format(time.RFC3339), want)
		}
	}
}

// probeAt answers GET /readyz (status and checks) and GET /metrics (with
// the operator key) of a server whose engine's clock stands at now, the
// fx check off.
func probeAt(t *testing.T, now time.Time) (int, httpserver.Readiness, []byte) {
	t.Helper()
	e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: testAccounts(t), Clock: func() time.Time { return now }, Rand: &detRand{seed: "ready"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewServer(newHandler(t, e, httpserver.Options{RateLimit: rate.Inf, OperatorKey: operatorKey, FXMaxAge: -1}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rd httpserver.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+operatorKey)
	mresp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	body, err := io.ReadAll(mresp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, rd, body
}

package httpserver_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/httpserver"
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

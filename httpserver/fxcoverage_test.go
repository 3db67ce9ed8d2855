package httpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
)

// TestCapabilitiesECBCoverageIsCurrent: on the rates a deployment keeps
// current (fx.LiveTable, the server's default), GET /v1/capabilities
// states the ECB coverage (README: "VAT rate-table and ECB coverage"), and
// a publication merged while the server runs moves it: the document is not
// the one built at the first request.
func TestCapabilitiesECBCoverageIsCurrent(t *testing.T) {
	base, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	live := fx.NewLiveTable(base)
	f := newFixtureWith(t, func(c *fiscal.Config) { c.FX = live })
	through := func() string {
		t.Helper()
		r := f.do("GET", "/v1/capabilities", "", nil)
		var c struct {
			FX struct {
				RatesThrough string `json:"rates_through"`
			} `json:"fx"`
		}
		if err := json.Unmarshal(r.body, &c); r.status != 200 || err != nil {
			t.Fatalf("%d %v", r.status, err)
		}
		return c.FX.RatesThrough
	}
	if got := through(); got != "2026-04-13" {
		t.Fatalf("rates_through %q, want 2026-04-13", got)
	}
	next, err := fx.ParseCSV(strings.NewReader("date,usd_per_eur\n2026-04-14,1.1702\n"), "test:ecb-2026-04-14")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Merge(next); err != nil {
		t.Fatal(err)
	}
	if got := through(); got != "2026-04-14" {
		t.Errorf("after the 2026-04-14 publication, rates_through %q", got)
	}
}

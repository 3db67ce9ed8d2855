package fiscal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
)

// TestNewRefusesUnknownFXPolicy: Seller.FXPolicy was checked when the
// engine opened, Config.FXPolicy was not: an engine with a misspelt policy
// opened fine and then answered every settlement INTERNAL ("fx: unknown
// policy"). New now refuses it, as it refuses a seller's, and creates
// nothing in the directory; "" and the two record policies still open.
func TestNewRefusesUnknownFXPolicy(t *testing.T) {
	seller := fiscal.Seller{LegalName: "Demo Digital Services Ltd", Country: "IE", VATNumber: "IE1234567T", OverThreshold: true}
	for _, p := range []fx.Policy{"bogus", "Latest-Published-At", fx.PeriodEndOrNext} {
		dir := t.TempDir()
		e, err := fiscal.New(fiscal.Config{Dir: dir, FXPolicy: p, Accounts: []fiscal.Account{{ID: "a", Seller: seller}}})
		if err == nil {
			e.Close()
			t.Errorf("New with Config.FXPolicy %q opened; want an error naming Config.FXPolicy", p)
			continue
		}
		if !strings.Contains(err.Error(), "Config.FXPolicy") {
			t.Errorf("New with Config.FXPolicy %q: %v; want an error naming Config.FXPolicy", p, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "ledger.db")); err == nil {
			t.Errorf("New with Config.FXPolicy %q created ledger.db before refusing", p)
		}
	}
	for _, p := range []fx.Policy{"", fx.LatestPublishedAt, fx.ForDayOrPrevious} {
		e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), FXPolicy: p, Accounts: []fiscal.Account{{ID: "a", Seller: seller}}})
		if err != nil {
			t.Errorf("New with Config.FXPolicy %q: %v", p, err)
			continue
		}
		if got, want := e.Settings().FXPolicy, p; want == "" && got != fx.LatestPublishedAt || want != "" && got != want {
			t.Errorf("Config.FXPolicy %q: Settings().FXPolicy = %q", p, got)
		}
		e.Close()
	}
}

package rates_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/rates"
)

// TestSecondNewRefused: a second rates.New on an engine whose refresh
// already runs would start a second refresh and retry loop over the same
// stored documents and wait queue; it is refused with an error saying so.
func TestSecondNewRefused(t *testing.T) {
	ecb := newECBServer(t)
	e, _ := engineWithRates(t, t.TempDir(), time.Now(), ecb)
	defer e.Close()
	live := e.Settings().FX.(*fx.LiveTable)
	_, err := rates.New(e, live, rates.Options{Feeds: ecb.feeds(), Client: ecb.srv.Client(), Logger: fiscaltest.Logger()})
	if err == nil {
		t.Fatal("a second rates.New on the same engine started a second refresh loop")
	}
	if !errors.Is(err, ledger.ErrReserved) {
		t.Errorf("the refusal does not wrap ledger.ErrReserved: %v", err)
	}
}

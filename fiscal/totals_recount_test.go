package fiscal_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// forgetTotalsBuilt makes e's ledger one whose running totals an older
// version kept: the marker of the current count is removed, so that the
// next open recounts them (rebuildTotals).
func forgetTotalsBuilt(t *testing.T, e *fiscal.Engine) {
	t.Helper()
	fiscaltest.ForgetTotals(t, e) // no year's totals: the marker only
}

// TestTotalsRecountKeepsAnAccountConfiguredLater: the totals of a ledger
// written before the engine kept them are built at open while an account
// that has records is not configured (an operator removed it, or adds it later,
// SetAccounts). Its totals must not be lost: once it is configured again
// they are those its records give, not empty (every decision would
// otherwise start the year from zero and tax at origin past EUR 10,000,
// Art. 59c(1)(c) Directive 2006/112/EC).
func TestTotalsRecountKeepsAnAccountConfiguredLater(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	for i, c := range []string{"DE", "FR", "AT"} {
		if _, err := b.Settle(context.Background(), fiscaltest.Request(i, "1234.56", c, "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := b.Totals(context.Background())
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept totals %+v %v", kept, err)
	}
	// A ledger of a version that kept no totals: none stored, no marker.
	if err := e.Ledger().Update(func(tx ledger.Tx) error {
		return tx.Delete("cross-border-totals", []byte(fiscaltest.AccountID(0)+"\x002026"))
	}); err != nil {
		t.Fatal(err)
	}
	forgetTotalsBuilt(t, e)
	e.Close()

	other := cfg
	other.Accounts = []fiscal.Account{{ID: "acct_other", Seller: smallIrishSeller}}
	e = fiscaltest.Engine(t, other)
	if err := e.SetAccounts(cfg.Accounts); err != nil {
		t.Fatal(err)
	}
	if got, err := fiscaltest.Books(t, e, 0).Totals(context.Background()); err != nil || !slices.Equal(got, kept) {
		t.Errorf("configured after the recount: totals %+v (%v), want %+v", got, err, kept)
	}
	e.Close()
	e = fiscaltest.Engine(t, cfg)
	if got, err := fiscaltest.Books(t, e, 0).Totals(context.Background()); err != nil || !slices.Equal(got, kept) {
		t.Errorf("opened with the account: totals %+v (%v), want %+v", got, err, kept)
	}
}

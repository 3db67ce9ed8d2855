package fiscalevent_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// TestAccountSellerEventsUseRunningTotals: a fiscal event of the account's
// own seller is one of its supplies. Its Art. 59c position is the one the
// engine keeps for the account (README "Art. 59c threshold from the
// ledger": opening figures plus every counted sale), as for POST
// /settlements: an Irish seller whose 2026 total is already over EUR
// 10,000 charges the German consumer's VAT, not Irish VAT (Art. 59c(1)(c),
// (2) Directive 2006/112/EC), and the event's value counts toward the
// total like a settlement's.
func TestAccountSellerEventsUseRunningTotals(t *testing.T) {
	seller, e := fiscaltest.TotalsEngine(t, "12000")
	ctx := context.Background()
	b := fiscaltest.Books(t, e, 0)

	settled, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if c := settled.Record.Classification; c.Regime != vat.RegimeOSSB2C || c.TaxingCountry != "DE" {
		t.Fatalf("settlement: %s %s, want OSS_B2C DE", c.Regime, c.TaxingCountry)
	}
	res, err := fiscalevent.New(e).Record(ctx, fiscaltest.AccountID(0), request(2, "11.90", seller.LegalName, "IE", "DE"), "")
	if err != nil {
		t.Fatal(err)
	}
	d := res.Event.Determination
	if d.Status != vat.StatusDetermined || d.Regime != vat.RegimeOSSB2C || d.TaxingCountry != "DE" {
		t.Errorf("fiscal event of the account's seller over the threshold: %s %s %s %v, want OSS_B2C DE like its settlement",
			d.Status, d.Regime, d.TaxingCountry, d.RatePercent)
	}
	th := d.Threshold
	if th == nil || th.Rule != vat.ThresholdCurrentYear || th.Counted == nil {
		t.Fatalf("threshold section %+v, want current_year_exceeded with the value counted", th)
	}
	totals, err := b.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := decimal.RequireFromString("12000").Add(*settled.Record.Classification.Threshold.Counted).Add(*th.Counted)
	if len(totals) != 1 || !decimal.RequireFromString(totals[0].CrossBorderEUR).Equal(want) {
		t.Errorf("running totals %+v, want 2026 at %s (opening, the settlement and the fiscal event)", totals, want)
	}
}

// TestManualResolutionUsesSellerFacts: a person's determination of a
// fiscal event is checked against the seller's facts as the rules read
// them (vat.DetermineManually), so those facts must be the event's: the
// account's seller here states it is over the Art. 59c threshold. Its
// consumer sale to Germany is taxed in Germany (Art. 59c(1)(c)); Irish
// VAT at origin contradicts the law and is refused, OSS_B2C DE stands, as
// for a settlement of the same account (fiscal.Books.Resolve).
func TestManualResolutionUsesSellerFacts(t *testing.T) {
	for _, c := range []struct {
		m      fiscal.ManualDetermination
		refuse bool
	}{
		{fiscal.ManualDetermination{Regime: vat.RegimeDomestic, TaxingCountry: "IE", RatePercent: "23", Reason: "origin"}, true},
		{fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "a consumer after all"}, false},
	} {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		events := fiscalevent.New(e)
		ctx := context.Background()
		acct := fiscaltest.AccountID(0)
		res, err := events.Record(ctx, acct, b2bEvent(2, "DE136695976"), "") // no registry: left for review
		if err != nil {
			t.Fatal(err)
		}
		m := c.m
		got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Determination: &m, ResolvedBy: "ops-1"}, "")
		switch {
		case c.refuse && fiscaltest.Code(err) != fiscal.CodeBadRequest:
			t.Errorf("%s %s for a seller over the threshold: %v, want it refused", m.Regime, m.TaxingCountry, err)
		case !c.refuse && err != nil:
			t.Errorf("%s %s for a seller over the threshold: %v", m.Regime, m.TaxingCountry, err)
		case !c.refuse && (got.Event.Determination.Regime != m.Regime || got.Event.Determination.TaxingCountry != m.TaxingCountry):
			t.Errorf("%s %s: recorded %s %s", m.Regime, m.TaxingCountry, got.Event.Determination.Regime, got.Event.Determination.TaxingCountry)
		}
	}
}

// TestTotalsRebuiltCountFiscalEvents: a ledger written before the engine
// kept its Art. 59c running totals has them built once when opened
// (fiscal's rebuildTotals). The account's own fiscal events count toward
// the totals when recorded, as its settlements do, so the rebuild must
// count them too: a review found it reading only the settlements, leaving
// a seller that records its sales as fiscal events below the threshold
// after a rebuild.
func TestTotalsRebuiltCountFiscalEvents(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.OverThreshold = false
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller)
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := fiscaltest.Books(t, e, 0)
	if _, err := b.Settle(ctx, fiscaltest.Request(1, "1234.56", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
		t.Fatal(err)
	}
	events := fiscalevent.New(e)
	for i, c := range []string{"FR", "AT"} {
		res, err := events.Record(ctx, fiscaltest.AccountID(0), request(2+i, "2345.67", seller.LegalName, "IE", c), "")
		if err != nil {
			t.Fatal(err)
		}
		if th := res.Event.Determination.Threshold; th == nil || !th.Counts || th.Counted == nil {
			t.Fatalf("fiscal event to %s: threshold section %+v, want it counted", c, th)
		}
	}
	kept, err := b.Totals(ctx)
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept totals %+v %v", kept, err)
	}
	// Forget them, as a ledger of an older version never had them.
	fiscaltest.ForgetTotals(t, e, "2026")
	e.Close()
	e = fiscaltest.Engine(t, cfg)
	rebuilt, err := fiscaltest.Books(t, e, 0).Totals(ctx)
	if err != nil || !slices.Equal(rebuilt, kept) {
		t.Fatalf("rebuilt %+v, kept %+v (%v): the rebuild must count the fiscal events as recording did", rebuilt, kept, err)
	}
}

// TestAccountSellerStatedOverByItsTotals: the account's profile does not
// state the seller is over the Art. 59c threshold (overThreshold false:
// the engine decides from the running totals), and its 2026 totals are
// already over EUR 10,000. A fiscal event whose body states overThreshold
// true states what the ledger says: a review found it refused as
// contradicting the profile. It is accepted, and decided as without the
// statement (destination VAT, Art. 59c(1)(c) and (2)). The same statement
// for an account whose totals are within the threshold contradicts the
// ledger and is still refused, naming the field.
func TestAccountSellerStatedOverByItsTotals(t *testing.T) {
	over := true
	for _, c := range []struct {
		opening string
		accept  bool
	}{{"12000", true}, {"4200", false}} {
		seller, e := fiscaltest.TotalsEngine(t, c.opening)
		req := request(1, "11.90", seller.LegalName, "IE", "DE")
		req.Seller.OverThreshold = &over
		res, err := fiscalevent.New(e).Record(context.Background(), fiscaltest.AccountID(0), req, "")
		switch {
		case c.accept && err != nil:
			t.Errorf("opening %s, overThreshold true: %v, want it accepted (the totals are over EUR 10,000)", c.opening, err)
		case c.accept:
			if d := res.Event.Determination; d.Regime != vat.RegimeOSSB2C || d.TaxingCountry != "DE" || !res.Event.Seller.AccountSeller {
				t.Errorf("opening %s: %s %s (account seller %t), want OSS_B2C DE for the account's seller", c.opening, d.Regime, d.TaxingCountry, res.Event.Seller.AccountSeller)
			}
		default:
			if fe := fiscaltest.Code(err); fe != fiscal.CodeBadRequest {
				t.Errorf("opening %s, overThreshold true: %v, want BAD_REQUEST", c.opening, err)
			} else if fe := (*fiscal.Error)(nil); errors.As(err, &fe) && fe.Field != "/seller/overThreshold" {
				t.Errorf("opening %s: field %q, want /seller/overThreshold", c.opening, fe.Field)
			}
		}
	}
}

// TestAccountSellerStatedUnderAgainstItsTotals: the account's profile
// leaves the Art. 59c position to the running totals (overThreshold false)
// and they are already over EUR 10,000 in 2026, so the sale is taxed where
// the customer is (Art. 59c(1)(c) and (2) Directive 2006/112/EC). A body
// stating overThreshold false contradicts the ledger: it is refused naming
// the field (README: a fact that contradicts the profile or the totals is
// 400), not silently decided against the caller's statement, and nothing
// is recorded. With totals within the threshold the same statement is true
// and the event is recorded.
func TestAccountSellerStatedUnderAgainstItsTotals(t *testing.T) {
	under := false
	for _, c := range []struct {
		opening string
		accept  bool
	}{{"12000", false}, {"4200", true}} {
		seller, e := fiscaltest.TotalsEngine(t, c.opening)
		req := request(1, "11.90", seller.LegalName, "IE", "DE")
		req.Seller.OverThreshold = &under
		res, err := fiscalevent.New(e).Record(context.Background(), fiscaltest.AccountID(0), req, "")
		switch {
		case c.accept && err != nil:
			t.Errorf("opening %s, overThreshold false: %v, want it accepted (the totals are within EUR 10,000)", c.opening, err)
		case c.accept:
			if d := res.Event.Determination; d.TaxingCountry != "IE" || !res.Event.Seller.AccountSeller {
				t.Errorf("opening %s: %s %s (account seller %t), want IE VAT for the account's seller", c.opening, d.Regime, d.TaxingCountry, res.Event.Seller.AccountSeller)
			}
		default:
			if fe := fiscaltest.Code(err); fe != fiscal.CodeBadRequest {
				t.Errorf("opening %s, overThreshold false: %v, want BAD_REQUEST", c.opening, err)
			} else if fe := (*fiscal.Error)(nil); errors.As(err, &fe) && fe.Field != "/seller/overThreshold" {
				t.Errorf("opening %s: field %q, want /seller/overThreshold", c.opening, fe.Field)
			}
			if n := e.Ledger().Size(); n != 0 {
				t.Errorf("opening %s: %d ledger entries after a refusal", c.opening, n)
			}
		}
	}
}

// TestTotalsRecountedForUndercountingVersions: from 25 November 2026 (the
// engine kept its Art. 59c running totals, marking the ledger
// "cross-border-totals/v1") until 7 December 2026 (2cd4b23, and 66ebb95 for
// the rebuild) the account's own fiscal events were neither decided on nor
// counted toward the totals, so a ledger such a version wrote carries
// totals that leave them out, under a marker that says they were built:
// opening it kept them, and a seller recording its sales as fiscal events
// stayed on its own VAT after crossing EUR 10,000 (Art. 59c(1)(c), (2)
// Directive 2006/112/EC). The same marker also covers the totals of the
// versions that counted a fiscal event waiting for its invoice twice. Such
// a ledger is recounted once when opened, its stored totals replaced (a
// year such a version counted a supply in that nothing counts now goes);
// a ledger whose totals this version built is not recounted.
func TestTotalsRecountedForUndercountingVersions(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.OverThreshold = false
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller)
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	settled, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "1234.56", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	events := fiscalevent.New(e)
	for i, c := range []string{"FR", "AT"} {
		if _, err := events.Record(ctx, fiscaltest.AccountID(0), request(2+i, "2345.67", seller.LegalName, "IE", c), ""); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := fiscaltest.Books(t, e, 0).Totals(ctx)
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept totals %+v %v", kept, err)
	}
	// What such a version stored: the settlement alone, marked as built.
	older := settled.Record.Classification.Threshold.Counted.String()
	age := func(marker string) {
		t.Helper()
		e.Close()
		e = fiscaltest.Engine(t, cfg)
		err := e.Ledger().Update(func(tx ledger.Tx) error {
			if err := tx.Put("cross-border-totals", []byte(fiscaltest.AccountID(0)+"\x002026"), []byte(older)); err != nil {
				return err
			}
			if marker == "" {
				return nil
			}
			// A year such a version counted a supply in that no state now
			// counts (a waiting event counted while it waited, say).
			if err := tx.Put("cross-border-totals", []byte(fiscaltest.AccountID(0)+"\x002025"), []byte("812.5")); err != nil {
				return err
			}
			for _, k := range []string{"cross-border-totals/v1", "cross-border-totals/v2"} {
				if err := tx.Delete("engine-meta", []byte(k)); err != nil {
					return err
				}
			}
			return tx.Put("engine-meta", []byte(marker), []byte("2026-12-01T09:00:00Z"))
		})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		e = fiscaltest.Engine(t, cfg)
	}
	age("cross-border-totals/v1")
	recounted, err := fiscaltest.Books(t, e, 0).Totals(ctx)
	if err != nil || !slices.Equal(recounted, kept) {
		t.Fatalf("opened a ledger whose totals (%s) an undercounting version built: %+v, want them recounted to %+v (%v)", older, recounted, kept, err)
	}
	// Built by this version: opening it again reads the totals as kept (a
	// recount would have undone the edit below).
	age("")
	if again, err := fiscaltest.Books(t, e, 0).Totals(ctx); err != nil || len(again) != 1 || again[0].CrossBorderEUR != older {
		t.Errorf("opened a ledger whose totals this version built: %+v (%v), want them read as stored (%s), not recounted", again, err, older)
	}
}

package fiscal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/vat"
)

// testEngine returns an engine on a temporary directory whose accounts are
// the given sellers (ids "acct_0", "acct_1", ...), with a fixed clock.
func testEngine(t testing.TB, now time.Time, sellers ...fiscal.Seller) *fiscal.Engine {
	t.Helper()
	return fiscaltest.Engine(t, fiscaltest.Config(t, now, sellers...))
}

var irishSeller = fiscaltest.IrishSeller

func request(n int, amount, country, timestamp string) fiscal.SettlementRequest {
	return fiscaltest.Request(n, amount, country, timestamp)
}

var euMemberStates = []string{"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "EL", "ES", "FI", "FR", "HR", "HU", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK"}

// TestInvoicesPassValidator settles a B2C sale into every member state, with
// amounts at the rounding edges, checks the amounts against the record's own
// rate and the EN 16931 arithmetic, and runs every invoice through
// testdata/conformance/validate-ubl (XSD always; the CEN EN 16931 schematron
// when EN16931_XSLT points at it).
func TestInvoicesPassValidator(t *testing.T) {
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	amounts := []string{"0.000001", "0.01", "0.05", "1.19", "11.90", "100", "12345.678901", "999999999.999999"}
	dir := t.TempDir()
	var files []string
	n := 0
	for _, cc := range euMemberStates {
		for _, amount := range amounts {
			n++
			res, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), request(n, amount, cc, "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatalf("%s %s: %v", cc, amount, err)
			}
			r := res.Record
			if r.ReviewStatus != fiscal.StatusProcessed {
				t.Fatalf("%s %s: %s %v", cc, amount, r.ReviewStatus, r.ReviewReasons)
			}
			checkAmounts(t, r)
			ubl, sum, err := fiscaltest.Books(t, e, 0).Invoice(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if sum != r.Invoice.UBLSHA256 {
				t.Fatalf("invoice hash %s, record %s", sum, r.Invoice.UBLSHA256)
			}
			f := filepath.Join(dir, r.ID+".xml")
			if err := os.WriteFile(f, ubl, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	validateUBL(t, files, false)
}

// checkAmounts re-derives gross, net and VAT, exact and to the cent, from
// the record's USDC amount, ECB rate and VAT rate, independently of the
// engine's code path: exact figures at 12 decimals (net = gross × 100 /
// (100 + rate), VAT = gross − net), the cent figures rounded once from them
// (gross, VAT; net = gross − VAT).
func checkAmounts(t *testing.T, r *fiscal.Record) {
	t.Helper()
	usdc := decimal.RequireFromString(r.FX.AmountUSDC)
	rate := decimal.RequireFromString(r.FX.USDPerEUR.Raw)
	grossExact := usdc.DivRound(rate, 12)
	netExact, vatExact := grossExact, decimal.Zero
	if r.Classification.RatePercent != nil && r.Classification.Category != "AE" && r.Classification.Category != "O" {
		pct := r.Classification.RatePercent.Decimal()
		netExact = grossExact.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(pct), 12)
		vatExact = grossExact.Sub(netExact)
	}
	gross, vat := grossExact.Round(2), vatExact.Round(2)
	net := gross.Sub(vat)
	if r.FX.GrossEUR != gross.StringFixed(2) || r.FX.NetEUR != net.StringFixed(2) || r.FX.VATEUR != vat.StringFixed(2) {
		t.Errorf("%s %s USDC: gross/net/vat %s/%s/%s, want %s/%s/%s", r.Classification.TaxingCountry, r.FX.AmountUSDC,
			r.FX.GrossEUR, r.FX.NetEUR, r.FX.VATEUR, gross.StringFixed(2), net.StringFixed(2), vat.StringFixed(2))
	}
	if r.FX.GrossEURExact != grossExact.StringFixed(12) || r.FX.NetEURExact != netExact.StringFixed(12) || r.FX.VATEURExact != vatExact.StringFixed(12) {
		t.Errorf("exact gross/net/vat %s/%s/%s, want %s/%s/%s", r.FX.GrossEURExact, r.FX.NetEURExact, r.FX.VATEURExact,
			grossExact.StringFixed(12), netExact.StringFixed(12), vatExact.StringFixed(12))
	}
	// BR-CO-17: the VAT of a group is its base × rate within one unit.
	if r.Classification.RatePercent != nil {
		exact := net.Mul(r.Classification.RatePercent.Decimal()).Div(decimal.NewFromInt(100))
		if diff := vat.Sub(exact).Abs(); diff.GreaterThan(decimal.RequireFromString("0.01")) {
			t.Errorf("VAT %s differs from net × rate %s by %s", vat, exact, diff)
		}
	}
}

func validateUBL(t *testing.T, files []string, peppol bool) { fiscaltest.ValidateUBL(t, files, peppol) }

// TestMissingCountryNeverZeroRated: without consumerCountry the record is
// pending, carries no rate, no VAT amount and no invoice (its VAT is never
// taken as 0 %).
func TestMissingCountryNeverZeroRated(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
		res, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), request(1, "10.00", "", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.ReviewStatus != fiscal.StatusPendingReview || r.Classification.Status != vat.StatusManualReview {
			t.Fatalf("status %s / %s", r.ReviewStatus, r.Classification.Status)
		}
		if r.Classification.RatePercent != nil || r.FX.VATEUR != "" || r.FX.NetEUR != "" || r.Invoice != nil {
			t.Fatalf("pending record states a rate, VAT or invoice: %+v %+v %+v", r.Classification, r.FX, r.Invoice)
		}
		if len(r.ReviewReasons) == 0 || r.ReviewReasons[0].Code != "buyer_country_missing" {
			t.Fatalf("reasons %+v", r.ReviewReasons)
		}
		if _, _, err := fiscaltest.Books(t, e, 0).Invoice(context.Background(), r.ID); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("invoice of a pending record: %v", err)
		}
	})
}

// TestSettleErrorsAreTyped: library callers branch on codes, not messages.
func TestSettleErrorsAreTyped(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
		req := request(1, "10.00", "DE", "2026-04-10T14:30:00Z")
		req.Network = "eip155:10"
		_, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), req, "")
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeUnsupportedNetwork || fe.Field != "/network" || fe.Code.HTTPStatus() != 422 {
			t.Fatalf("got %#v", err)
		}
		if _, err := e.Books("nobody"); fiscaltest.Code(err) != fiscal.CodeNotFound || !strings.Contains(err.Error(), "nobody") {
			t.Fatalf("unknown account: %v", err)
		}
	})
}

// TestCodes: the code table is sorted, and a code is retryable exactly when
// its status is 429 or 5xx.
func TestCodes(t *testing.T) {
	codes := fiscal.Codes()
	if !slices.IsSorted(codes) || !slices.Contains(codes, fiscal.CodeIdempotencyConflict) || !slices.Contains(codes, fiscal.CodeDBUnavailable) {
		t.Errorf("Codes() = %v", codes)
	}
	for _, c := range codes {
		want := c == "RATE_LIMITED" || c == "QUOTA_EXCEEDED" || c == fiscal.CodeDBUnavailable || c == fiscal.CodeChainUnavailable || c == fiscal.CodeInternal
		if c.Retryable() != want {
			t.Errorf("%s.Retryable() = %v", c, c.Retryable())
		}
	}
}

// TestSetAccounts: an account added while the engine runs is served at
// once; a list with an error changes nothing.
func TestSetAccounts(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
		if _, err := e.Books("acct_new"); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("before: %v", err)
		}
		accounts := append(e.Accounts(), fiscal.Account{ID: "acct_new", Seller: irishSeller})
		if err := e.SetAccounts(append(slices.Clone(accounts), fiscal.Account{ID: "bad", Seller: fiscal.Seller{Country: "IE"}})); err == nil {
			t.Fatal("a seller without a name was accepted")
		}
		if _, err := e.Books("acct_new"); err == nil {
			t.Fatal("a refused list changed the accounts")
		}
		if err := e.SetAccounts(accounts); err != nil {
			t.Fatal(err)
		}
		b, err := e.Books("acct_new")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Settle(context.Background(), request(900, "1.00", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBooksShared: Engine.Books hands out one read-only Books per account
// without allocating; books taken before SetAccounts keep their account;
// Open's books own the engine, the engine's own do not.
func TestBooksShared(t *testing.T) {
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	id := e.Accounts()[0].ID
	before, err := e.Books(id)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = e.Books(id) }); allocs != 0 {
		t.Errorf("Engine.Books allocates %v times per call", allocs)
	}
	changed := irishSeller
	changed.LegalName = "Renamed Ltd"
	if err := e.SetAccounts([]fiscal.Account{{ID: id, Seller: changed}}); err != nil {
		t.Fatal(err)
	}
	after, err := e.Books(id)
	if err != nil {
		t.Fatal(err)
	}
	if before.Account().Seller.LegalName != irishSeller.LegalName || after.Account().Seller.LegalName != "Renamed Ltd" {
		t.Fatalf("before SetAccounts %q, after %q", before.Account().Seller.LegalName, after.Account().Seller.LegalName)
	}
	if err := after.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := after.Settle(context.Background(), request(901, "1.00", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
		t.Fatalf("the engine's books closed the engine: %v", err)
	}
	owned, err := fiscal.Open(t.TempDir(), irishSeller)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := owned.Engine().Books(fiscal.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	if shared == owned {
		t.Fatal("Open returned the engine's shared books")
	}
	if err := owned.Close(); err != nil {
		t.Fatal(err)
	}
}

// eachBackend runs a test on every ledger store (pgtest.Backends): the
// engine fiscaltest.Config makes inside it keeps its ledger there.
func eachBackend(t *testing.T, fn func(t *testing.T)) { pgtest.EachBackend(t, fn) }

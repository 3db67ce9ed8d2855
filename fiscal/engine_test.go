package fiscal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/vat"
)

// testEngine returns an engine on a temporary directory whose accounts are
// the given sellers (ids "acct_0", "acct_1", ...), with a fixed clock.
func testEngine(t testing.TB, now time.Time, sellers ...fiscal.Seller) *fiscal.Engine {
	t.Helper()
	var list []fiscal.Account
	for i, s := range sellers {
		list = append(list, fiscal.Account{ID: "acct_" + string(rune('0'+i)), KeyHashes: []string{fiscal.HashKey("key" + string(rune('0'+i)))}, Seller: s})
	}
	accounts, err := fiscal.NewAccounts(list)
	if err != nil {
		t.Fatal(err)
	}
	e, err := fiscal.New(fiscal.Config{
		DataDir: t.TempDir(), Accounts: accounts,
		Clock:  func() time.Time { return now },
		Rand:   &seededRand{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var irishSeller = fiscal.Seller{
	LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE",
	Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
	OverThreshold: true,
}

func request(n int, amount, country, timestamp string) fiscal.SettlementRequest {
	sum := sha256.Sum256([]byte{byte(n >> 8), byte(n)})
	return fiscal.SettlementRequest{
		AmountUSDC: amount, TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: timestamp,
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: country,
	}
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
			res, err := e.Settle(context.Background(), "acct_0", request(n, amount, cc, "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatalf("%s %s: %v", cc, amount, err)
			}
			r := res.Record
			if r.ReviewStatus != fiscal.StatusProcessed {
				t.Fatalf("%s %s: %s %v", cc, amount, r.ReviewStatus, r.ReviewReasons)
			}
			checkAmounts(t, r)
			ubl, sum, err := e.Invoice(context.Background(), "acct_0", r.ID)
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

// checkAmounts re-derives gross, net and VAT from the record's USDC amount,
// ECB rate and VAT rate, independently of the engine's code path.
func checkAmounts(t *testing.T, r *fiscal.Record) {
	t.Helper()
	usdc := decimal.RequireFromString(r.FX.AmountUSDC)
	rate := decimal.RequireFromString(r.FX.USDPerEUR.Raw)
	gross := usdc.DivRound(rate, 2)
	if r.Classification.RatePercent == nil || r.Classification.Category == "AE" {
		// No VAT charged (O outside scope, AE reverse charge): net = gross.
		if r.FX.GrossEUR != gross.StringFixed(2) || r.FX.NetEUR != r.FX.GrossEUR || r.FX.VATEUR != "0.00" {
			t.Errorf("%s: gross/net/vat %s/%s/%s, want %s/%s/0.00", r.Classification.Category, r.FX.GrossEUR, r.FX.NetEUR, r.FX.VATEUR, gross.StringFixed(2), gross.StringFixed(2))
		}
		return
	}
	pct := r.Classification.RatePercent.Decimal()
	net := gross.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(pct), 2)
	if r.FX.GrossEUR != gross.StringFixed(2) || r.FX.NetEUR != net.StringFixed(2) || r.FX.VATEUR != gross.Sub(net).StringFixed(2) {
		t.Errorf("%s %s USDC at %s%%: gross/net/vat %s/%s/%s, want %s/%s/%s", r.Classification.TaxingCountry, r.FX.AmountUSDC, pct,
			r.FX.GrossEUR, r.FX.NetEUR, r.FX.VATEUR, gross.StringFixed(2), net.StringFixed(2), gross.Sub(net).StringFixed(2))
	}
	// BR-CO-17: the VAT of a group is its base × rate within one unit; ours is within about a cent.
	exact := net.Mul(pct).Div(decimal.NewFromInt(100))
	if diff := gross.Sub(net).Sub(exact).Abs(); diff.GreaterThan(decimal.RequireFromString("0.01")) {
		t.Errorf("VAT %s differs from net × rate %s by %s", gross.Sub(net), exact, diff)
	}
}

// validateUBL runs testdata/conformance/validate-ubl on the files: XSD always,
// the CEN layer when EN16931_XSLT is set, and the Peppol layer when peppol is
// true and PEPPOL_XSLT is set (plain EN 16931 invoices are not Peppol
// documents: PEPPOL-EN16931-R001 etc. reject them by design).
func validateUBL(t *testing.T, files []string, peppol bool) {
	t.Helper()
	if len(files) == 0 {
		return
	}
	testtool.LookPath(t, "xmllint")
	script := testtool.Conformance(t, "validate-ubl")
	cmd := exec.Command(script, files...)
	for _, kv := range os.Environ() {
		if !peppol && strings.HasPrefix(kv, "PEPPOL_XSLT=") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	if os.Getenv("EN16931_XSLT") != "" {
		testtool.LookPath(t, "java")
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) || strings.Contains(string(out), "[fatal]") {
		t.Fatalf("validate-ubl rejected the engine's invoices:\n%s", out)
	}
	if err != nil {
		t.Fatalf("validate-ubl: %v\n%s", err, out)
	}
	layers := "the UBL 2.1 XSD"
	if os.Getenv("EN16931_XSLT") != "" {
		layers += ", the CEN EN 16931 schematron"
	}
	if peppol && os.Getenv("PEPPOL_XSLT") != "" {
		layers += ", Peppol BIS 3.0"
	}
	t.Logf("validated %d invoices against %s (set EN16931_XSLT / PEPPOL_XSLT to add the schematron layers)", len(files), layers)
}

// TestMissingCountryNeverZeroRated: without consumerCountry the record is
// pending, carries no rate, no VAT amount and no invoice (spec §3).
func TestMissingCountryNeverZeroRated(t *testing.T) {
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	res, err := e.Settle(context.Background(), "acct_0", request(1, "10.00", "", "2026-04-10T14:30:00Z"), "")
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
	if _, _, err := e.Invoice(context.Background(), "acct_0", r.ID); fiscal.CodeOf(err) != fiscal.CodeNotFound {
		t.Fatalf("invoice of a pending record: %v", err)
	}
}

// TestSettleErrorsAreTyped: library callers branch on codes, not messages.
func TestSettleErrorsAreTyped(t *testing.T) {
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	req := request(1, "10.00", "DE", "2026-04-10T14:30:00Z")
	req.Network = "eip155:10"
	_, err := e.Settle(context.Background(), "acct_0", req, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeUnsupportedNetwork || fe.Field != "/network" || fe.Code.HTTPStatus() != 422 {
		t.Fatalf("got %#v", err)
	}
	if !errors.Is(err, &fiscal.Error{Code: fiscal.CodeUnsupportedNetwork}) {
		t.Fatal("errors.Is by code does not match")
	}
	if _, err := e.Settle(context.Background(), "nobody", request(2, "1", "DE", "2026-04-10T14:30:00Z"), ""); fiscal.CodeOf(err) != fiscal.CodeAuthenticationFailed {
		t.Fatalf("unknown account: %v", err)
	}
}

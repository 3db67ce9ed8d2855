// Package fiscaltest builds what the tests of the engine and of the packages
// around it share: a deterministic engine on a temporary directory, sample
// sellers and settlement requests, and the UBL validator.
package fiscaltest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// Rand is a deterministic io.Reader (a SHA-256 chain from the zero block),
// safe for concurrent use: fixed keys, fixed sandbox ids.
type Rand struct {
	mu    sync.Mutex
	block [32]byte
	used  int
}

func (r *Rand) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range p {
		if r.used == len(r.block) {
			r.block = sha256.Sum256(r.block[:])
			r.used = 0
		}
		p[i] = r.block[r.used]
		r.used++
	}
	return len(p), nil
}

// AccountID is the id of the i-th account of Engine: "acct_0", "acct_1", ...
func AccountID(i int) string { return "acct_" + strconv.Itoa(i) }

// Accounts makes one account per seller, with ids AccountID(i).
func Accounts(sellers ...fiscal.Seller) []fiscal.Account {
	var list []fiscal.Account
	for i, s := range sellers {
		list = append(list, fiscal.Account{ID: AccountID(i), Seller: s})
	}
	return list
}

// Config is the configuration of Engine before the caller's changes: a
// temporary directory, the sellers' accounts, a fixed clock, deterministic
// keys and a silent logger.
// Inside pgtest.EachBackend's PostgreSQL subtest the ledger is a
// PostgreSQL log in a schema of the test's own.
func Config(t testing.TB, now time.Time, sellers ...fiscal.Seller) fiscal.Config {
	store := ""
	if pgtest.OnPostgres(t) {
		store = pgtest.Schema(t)
	}
	return fiscal.Config{
		Store:    store,
		Dir:      t.TempDir(),
		Accounts: Accounts(sellers...),
		Clock:    func() time.Time { return now },
		Rand:     &Rand{},
		Logger:   Logger(),
	}
}

// Engine opens an engine on cfg (see Config) and closes it when the test
// ends.
func Engine(t testing.TB, cfg fiscal.Config) *fiscal.Engine {
	t.Helper()
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// Books returns the books of account i of e.
func Books(t testing.TB, e *fiscal.Engine, i int) *fiscal.Books {
	t.Helper()
	b, err := e.Books(AccountID(i))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CopyKeys copies the files of an engine's key directory from into the
// key directory to (made if missing), for another replica of the same log:
// the replicas of one ledger sign with the same keys.
func CopyKeys(t testing.TB, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// ForgetTotals deletes from e's ledger the Art. 59c running totals kept
// for account 0 in years and the mark of their build, as a ledger of a
// version that did not keep them never had them: the next engine opened
// on it rebuilds them.
func ForgetTotals(t testing.TB, e *fiscal.Engine, years ...string) {
	t.Helper()
	err := e.Ledger().Update(func(tx ledger.Tx) error {
		for _, y := range years {
			if err := tx.Delete("cross-border-totals", []byte(AccountID(0)+"\x00"+y)); err != nil {
				return err
			}
		}
		return tx.Delete("engine-meta", []byte("cross-border-totals/v2"))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Logger discards everything.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// IrishSeller is the demo seller: an Irish company over the Art. 59c
// threshold, so that its B2C sales are taxed where the buyer is.
var IrishSeller = fiscal.Seller{
	LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE",
	Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
	OverThreshold: true,
}

// IrishOSSSeller is IrishSeller with its registrations stated, undated:
// for VAT in Ireland, and for the Union OSS with Ireland as its member
// state of identification (Art. 369a, 369b Directive 2006/112/EC). Each
// call returns registrations of its own, for the caller to change.
func IrishOSSSeller() fiscal.Seller {
	s := IrishSeller
	s.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"},
	}
	return s
}

// TotalsEngine is an engine at 2026-04-13 18:00 UTC whose one account's
// seller is IrishSeller with its Art. 59c position left to the running
// totals (OverThreshold false), which open 2026 at opening EUR: over the
// EUR 10,000 threshold of Art. 59c(1)(c) Directive 2006/112/EC or within
// it, as opening says. It returns that seller too.
func TotalsEngine(t testing.TB, opening string) (fiscal.Seller, *fiscal.Engine) {
	t.Helper()
	s := IrishSeller
	s.OverThreshold = false
	s.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: opening}}
	return s, Engine(t, Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), s))
}

// Request is settlement request n: a tx hash derived from n, fixed wallets
// on Base, the amount, the buyer's country and the timestamp given.
func Request(n int, amount, country, timestamp string) fiscal.SettlementRequest {
	return fiscal.SettlementRequest{
		AmountUSDC: amount, TxHash: TxHash(n), Timestamp: timestamp,
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: country,
	}
}

// TxHash is the tx hash of Request n.
func TxHash(n int) string {
	sum := sha256.Sum256([]byte{byte(n >> 8), byte(n)})
	return "0x" + hex.EncodeToString(sum[:])
}

// ValidateUBL runs testdata/conformance/validate-ubl on the files: XSD
// always, the CEN layer when EN16931_XSLT is set, and the Peppol layer when
// peppol is true and PEPPOL_XSLT is set (plain EN 16931 invoices are not
// Peppol documents: PEPPOL-EN16931-R001 etc. reject them by design).
func ValidateUBL(t testing.TB, files []string, peppol bool) {
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

// Code returns the code of err when it is a *fiscal.Error, else "".
func Code(err error) fiscal.Code {
	var fe *fiscal.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}

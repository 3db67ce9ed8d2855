package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// returnWorld is an OSS return of Q1 2026 with its receipts, as an
// auditor receives them: sales in five member states at two rates, a
// pending record, a reverse-charge and a domestic sale, and a sale of the
// next quarter.
type returnWorld struct {
	files, receipts, ret, jwks, logKey string
	doc                                returns.Return
	byCountryRate                      map[string]string // "DE 19" → its receipt file
	ids                                []string          // the sales' record ids
}

func buildReturnWorld(t *testing.T) *returnWorld {
	t.Helper()
	qNow := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"}}
	fake := vies.NewFake()
	fake.Set("FR40303265045", vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "FR", Number: "40303265045",
		Name: "SA EXEMPLE", Address: "12 RUE DE L'EXEMPLE\n75001 PARIS", RequestIdentifier: "WAPIFR", RequestDate: qNow})
	cfg := fiscaltest.Config(t, qNow, seller)
	cfg.VIES, cfg.NoBackground = fake, true
	clock := time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC) // the refunds' day, then qNow
	cfg.Clock = func() time.Time { return clock }
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	type sale struct{ amount, country, kind, vatNumber, at string }
	sales := []sale{
		{"1190.00", "DE", "", "", "2026-01-15T10:00:00Z"}, {"24.00", "AT", "", "", "2025-11-10T09:00:00Z"}, // refunded on 20 February
		{"10.70", "DE", "ebook", "", "2026-02-15T10:00:00Z"},
		{"24.40", "FR", "", "", "2026-01-20T09:00:00Z"}, {"10.55", "FR", "ebook", "", "2026-03-02T12:00:00Z"},
		{"36.60", "IT", "", "", "2026-02-01T08:00:00Z"}, {"10.40", "IT", "ebook", "", "2026-03-03T08:00:00Z"},
		{"12.10", "ES", "", "", "2026-02-10T17:00:00Z"}, {"20.80", "ES", "ebook", "", "2026-03-30T23:30:00Z"},
		{"60.50", "NL", "", "", "2026-01-05T11:00:00Z"}, {"10.90", "NL", "ebook", "", "2026-03-10T11:00:00Z"},
		{"11.90", "DE", "", "", "2026-03-31T20:00:00Z"},               // 22:00 in Berlin: still Q1
		{"12.00", "", "", "", "2026-02-15T10:00:00Z"},                 // no country: pending review
		{"100.00", "FR", "", "FR40303265045", "2026-02-16T10:00:00Z"}, // reverse charge
		{"100.00", "IE", "", "", "2026-02-16T10:00:00Z"},              // domestic
		{"50.00", "DE", "", "", "2026-04-02T10:00:00Z"},               // Q2
	}
	w := &returnWorld{files: t.TempDir(), byCountryRate: map[string]string{}}
	w.receipts = filepath.Join(w.files, "receipts")
	if err := os.MkdirAll(w.receipts, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(id, name string) {
		doc, err := b.Receipt(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.receipts, name+".json"), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range sales {
		if i == 2 {
			// 20 February: a tenth of the German sale and half of the
			// Austrian one of Q4 2025 are refunded.
			for _, rf := range []struct{ id, amount string }{{w.ids[0], "119.00"}, {w.ids[1], "12.00"}} {
				res, err := refunds.Create(ctx, b, rf.id, refunds.Request{AmountUSDC: rf.amount, Reason: "test"}, "refund-"+rf.id)
				if err != nil {
					t.Fatal(err)
				}
				save(res.Refund.ID, res.Refund.Receipt.ID)
			}
			clock = qNow
		}
		req := fiscaltest.Request(i+1, s.amount, s.country, s.at)
		req.SupplyKind, req.ConsumerVATNumber = s.kind, s.vatNumber
		if s.country == "IT" && s.kind == "ebook" {
			req.RateConditions = []string{"it_isbn_issn"} // the publication has an ISBN
		}
		res, err := b.Settle(ctx, req, fmt.Sprintf("q1-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		w.ids = append(w.ids, res.Record.ID)
		save(res.Record.ID, res.Record.Receipt.ID)
		name := filepath.Join(w.receipts, res.Record.Receipt.ID+".json")
		if c := res.Record.Classification; c.RatePercent != nil && w.byCountryRate[c.TaxingCountry+" "+c.RatePercent.String()] == "" {
			w.byCountryRate[c.TaxingCountry+" "+c.RatePercent.String()] = name // the first sale of each
		}
	}
	ret, signed, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 1}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.doc = *ret
	raw, _ := json.MarshalIndent(signed, "", "  ")
	w.ret = filepath.Join(w.files, "return-2026-Q1.json")
	jwks, _ := e.JWKS()
	w.jwks = filepath.Join(w.files, "jwks.json")
	w.logKey = e.LogVerifierKey()
	for p, data := range map[string][]byte{w.ret: raw, w.jwks: jwks} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *returnWorld) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, &out, &errOut)
	norm := func(s string) string { return strings.ReplaceAll(s, w.files, "$FILES") }
	return code, norm(out.String()), norm(errOut.String())
}

// lineOf is the number the command gives the OSS line of a country and
// rate.
func (w *returnWorld) lineOf(t *testing.T, country, rate string) int {
	for i, l := range w.doc.Lines {
		if l.MemberState == country && l.RatePercent == rate {
			return i + 1
		}
	}
	t.Fatalf("no line %s %s", country, rate)
	return 0
}

// copyReceipts copies the receipts directory, replacing old by new in the
// receipt file of one country and rate.
func (w *returnWorld) copyReceipts(t *testing.T, key string, old, new []byte) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(w.receipts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(w.receipts, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Join(w.receipts, e.Name()) == w.byCountryRate[key] {
			if !bytes.Contains(data, old) {
				i := bytes.Index(data, []byte("amount_usdc"))
				t.Fatalf("%s does not contain %q: %.80s", e.Name(), old, data[max(i, 0):])
			}
			data = bytes.Replace(data, old, new, 1)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReturn(t *testing.T) {
	w := buildReturnWorld(t)
	keys := []string{"--jwks", w.jwks, "--log-key", w.logKey}

	// The return as served verifies, with and without the keys.
	code, out, errOut := w.run(t, append([]string{"return", w.ret, "--receipts", w.receipts}, keys...)...)
	if code != ExitOK || !strings.HasPrefix(out, "return verified") || errOut != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if len(w.doc.Lines) != 10 || w.doc.Excluded.Pending.Records != 1 || len(w.doc.NotInOSS) != 2 || len(w.doc.Corrections) != 1 {
		t.Fatalf("the return has %d lines, %d pending, %d non-OSS summaries, %d corrections; want 10, 1, 2, 1",
			len(w.doc.Lines), w.doc.Excluded.Pending.Records, len(w.doc.NotInOSS), len(w.doc.Corrections))
	}
	golden(t, "return", out)
	code, out, _ = w.run(t, "return", w.ret, "--receipts", w.receipts)
	if code != ExitOK || !strings.Contains(out, "NOT verified (no --jwks") {
		t.Fatalf("without keys: exit %d\n%s", code, out)
	}

	// One changed amount in the DE 19 % receipt: the DE 19 % line fails,
	// as an unverifiable receipt with the keys, as a wrong sum without.
	de := fmt.Sprintf("line %d (OSS: DE 19 %%", w.lineOf(t, "DE", "19"))
	tampered := w.copyReceipts(t, "DE 19", []byte(`"amount_usdc": "1190.00"`), []byte(`"amount_usdc": "1180.00"`))
	code, out, _ = w.run(t, append([]string{"return", w.ret, "--receipts", tampered}, keys...)...)
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: "+de) || !strings.Contains(out, "does not verify") {
		t.Fatalf("tampered receipt, with keys: exit %d\n%s", code, out)
	}
	golden(t, "return-tampered-receipt", out)
	code, out, _ = w.run(t, "return", w.ret, "--receipts", tampered)
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: "+de) || !strings.Contains(out, "USDC total") {
		t.Fatalf("tampered receipt, without keys: exit %d\n%s", code, out)
	}
	golden(t, "return-tampered-receipt-nokeys", out)

	// A changed figure in the return: the signature check fails with the
	// keys; without them, the line's recomputation does.
	line := w.doc.Lines[w.lineOf(t, "FR", "20")-1]
	retTampered := tamper(t, w.ret, []byte(`"vatEur": "`+line.VATEUR+`"`), []byte(`"vatEur": "`+bump(line.VATEUR)+`"`))
	code, out, _ = w.run(t, append([]string{"return", retTampered, "--receipts", w.receipts}, keys...)...)
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: signature") {
		t.Fatalf("tampered return, with keys: exit %d\n%s", code, out)
	}
	code, out, _ = w.run(t, "return", retTampered, "--receipts", w.receipts)
	fr := fmt.Sprintf("line %d (OSS: FR 20 %%", w.lineOf(t, "FR", "20"))
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: "+fr) {
		t.Fatalf("tampered return, without keys: exit %d\n%s", code, out)
	}

	// A receipt left out of the directory names its index.
	missing := t.TempDir()
	entries, _ := os.ReadDir(w.receipts)
	for _, e := range entries {
		if filepath.Join(w.receipts, e.Name()) == w.byCountryRate["NL 9"] {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(w.receipts, e.Name()))
		_ = os.WriteFile(filepath.Join(missing, e.Name()), data, 0o644)
	}
	code, out, _ = w.run(t, "return", w.ret, "--receipts", missing)
	if code != ExitFailed || !strings.Contains(out, fmt.Sprintf("line %d (OSS: NL 9 %%", w.lineOf(t, "NL", "9"))) || !strings.Contains(out, "no receipt") {
		t.Fatalf("missing receipt: exit %d\n%s", code, out)
	}

	// Usage: no receipts directory.
	if code, _, errOut := w.run(t, "return", w.ret); code != ExitUsage || errOut == "" {
		t.Fatalf("no --receipts: exit %d", code)
	}
}

// bump adds a cent to a money string.
func bump(s string) string {
	var a, b int
	fmt.Sscanf(s, "%d.%d", &a, &b)
	b++
	if b == 100 {
		a, b = a+1, 0
	}
	return fmt.Sprintf("%d.%02d", a, b)
}

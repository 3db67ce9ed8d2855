package fiscal_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/testtool"
)

// FuzzSettleInvoice: whatever request the engine accepts, it either refuses
// with a typed *fiscal.Error or records it; every invoice it renders is
// well-formed and valid against the UBL 2.1 XSD (xmllint), and its amounts
// obey the EN 16931 arithmetic the record states.
func FuzzSettleInvoice(f *testing.F) {
	xmllint := testtool.LookPath(f, "xmllint")
	xsd := testtool.Conformance(f, "ubl-2.1", "maindoc", "UBL-Invoice-2.1.xsd")
	e := testEngine(f, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	books := fiscaltest.Books(f, e, 0)
	seeds := []struct{ amount, country, postal, name, kind string }{
		{"0.000001", "DE", "", "", ""},
		{"999999999.999999", "FR", "", "Zoë & <Co> \"quoted\" 'x'", ""},
		{"1.005", "IE", "", "مرحبا 🙂", "ebook"},
		{"42", "ES", "35001", "", ""},
		{"7.77", "US", "", "", "saas"},
		{"3.5", "", "", "", ""},
		{"12.34", "GR", "63086", "", "streaming"},
		{"1e3", "DE", "", "", ""},
		{"10", "DE", "", "bad\x01name", ""},
	}
	for _, s := range seeds {
		f.Add(s.amount, s.country, s.postal, s.name, s.kind)
	}
	var n atomic.Int64
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, amount, country, postal, name, kind string) {
		i := int(n.Add(1))
		req := request(i, amount, country, "2026-04-10T14:30:00Z")
		req.ConsumerPostalCode, req.ConsumerName, req.SupplyKind = postal, name, kind
		res, err := books.Settle(context.Background(), req, "")
		if err != nil {
			var fe *fiscal.Error
			if !errors.As(err, &fe) || fe.Code == fiscal.CodeInternal {
				t.Fatalf("untyped or internal error for %q %q %q %q %q: %v", amount, country, postal, name, kind, err)
			}
			return
		}
		r := res.Record
		if r.Invoice == nil {
			if r.ReviewStatus == fiscal.StatusProcessed {
				t.Fatal("processed record without an invoice")
			}
			return
		}
		checkAmounts(t, r)
		ubl, _, err := books.Invoice(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, r.ID+".xml")
		if err := os.WriteFile(file, ubl, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, file).CombinedOutput(); err != nil {
			t.Fatalf("invoice for %q %q %q %q %q is not valid UBL: %v\n%s", amount, country, postal, name, kind, err, out)
		}
	})
}

package fiscal_test

import (
	"context"
	"fmt"
	"github.com/fiscal402/fiscal402/receipt"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// Invoice and credit-note numbers as numbering.go documents them: the
// account's prefix, "CN-" for a credit note, the year, a dash and at least
// six digits.
func invoiceNumber(prefix string, year, n int) string {
	return fmt.Sprintf("%s%d-%06d", prefix, year, n)
}

func creditNoteNumber(prefix string, year, n int) string {
	return fmt.Sprintf("%sCN-%d-%06d", prefix, year, n)
}

// TestInvoicePrefixNeverMeetsCreditNotes: an invoice number must identify
// one document of the account (Art. 226(2) Directive 2006/112/EC). A
// prefix the account may choose never makes an invoice number that is a
// credit-note number of any prefix the account may choose (it can change
// its prefix) or of the default, nor reads as a credit note's number (the
// mark with nothing before it); a prefix that would is refused when the
// account is made or changed, naming seller.invoicePrefix.
func TestInvoicePrefixNeverMeetsCreditNotes(t *testing.T) {
	candidates := []string{"", "INV", "A/", "X-", "INV-", "F402-CN-", "INV-CN-", "INVCN-", "F402-cn-", "CN-", "CN-INV-", "CN", "A/CN-", "CN2026-", "F402-CN", "X-CN-2026-"}
	ok := func(p string) error {
		s := fiscaltest.IrishSeller
		s.InvoicePrefix = p
		_, err := fiscal.Account{ID: "a", Seller: s}.Normalised()
		return err
	}
	var accepted []string
	for _, p := range candidates {
		if ok(p) == nil {
			accepted = append(accepted, p)
		}
	}
	credit := append([]string{fiscal.DefaultInvoicePrefix, ""}, accepted...)
	for _, p := range candidates {
		ip := p
		if ip == "" {
			ip = fiscal.DefaultInvoicePrefix
		}
		collides := false
		for _, q := range credit {
			for _, n := range []int{1, 123, 999999, 1000000} {
				if strings.EqualFold(invoiceNumber(ip, 2026, n), creditNoteNumber(q, 2026, n)) {
					collides = true
				}
			}
		}
		err := ok(p)
		if collides && (err == nil || !strings.Contains(err.Error(), "seller.invoicePrefix")) {
			t.Errorf("prefix %q makes invoice numbers equal to credit-note numbers, yet the account is accepted (err %v)", p, err)
		}
		if !collides && err != nil {
			t.Errorf("prefix %q collides with no credit note, yet refused: %v", p, err)
		}
	}
	// The engine refuses it too, when made and when changed.
	s := fiscaltest.IrishSeller
	s.InvoicePrefix = "F402-CN-"
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	e := fiscaltest.Engine(t, cfg)
	accs := e.Accounts()
	accs[0].Seller = s
	if err := e.SetAccounts(accs); err == nil || !strings.Contains(err.Error(), "seller.invoicePrefix") {
		t.Errorf("SetAccounts with prefix %q: %v, want an error naming seller.invoicePrefix", s.InvoicePrefix, err)
	}
}

// TestProductionPrefixNeverLooksSandbox: the sandbox numbers its
// simulations in a series of its own; no production account may choose a
// prefix whose invoice numbers look like the sandbox's (the same text, in
// any case), so that a production invoice never passes for a simulation,
// nor one for the other. It is refused when the account is made or
// changed, naming seller.invoicePrefix.
func TestProductionPrefixNeverLooksSandbox(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.Environment = receipt.EnvSandbox
	sale, err := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0).Settle(context.Background(), fiscaltest.Request(1, "1.19", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil || sale.Record.Invoice == nil {
		t.Fatalf("sandbox sale: %v", err)
	}
	// The sandbox's series text: its number without the year and digits,
	// and without its separator.
	mark, ok := strings.CutSuffix(sale.Record.Invoice.ID, "2026-000001")
	if !ok {
		t.Fatalf("sandbox invoice %s", sale.Record.Invoice.ID)
	}
	mark = strings.ToUpper(strings.TrimRight(mark, "-_/."))

	prod := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	prod.Environment = receipt.EnvProduction
	e := fiscaltest.Engine(t, prod)
	for _, p := range []string{mark + "-", strings.ToLower(mark) + "-", mark, mark + "_A/", "INV-", "SAND-", "X" + mark + "-"} {
		s := fiscaltest.IrishSeller
		s.InvoicePrefix = p
		looks := strings.HasPrefix(strings.ToUpper(p+"2026-000001"), mark)
		_, nerr := fiscal.Account{ID: "a", Seller: s}.Normalised()
		accs := e.Accounts()
		accs[0].Seller = s
		serr := e.SetAccounts(accs)
		for _, err := range []error{nerr, serr} {
			if looks && (err == nil || !strings.Contains(err.Error(), "seller.invoicePrefix")) {
				t.Errorf("prefix %q numbers production invoices like the sandbox's (%s), yet accepted: %v", p, sale.Record.Invoice.ID, err)
			}
			if !looks && err != nil {
				t.Errorf("prefix %q: %v", p, err)
			}
		}
	}
}

package invoicing_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// clock is a settable test clock.
type clock struct{ t atomic.Pointer[time.Time] }

func (c *clock) set(t time.Time)  { c.t.Store(&t) }
func (c *clock) now() time.Time   { return *c.t.Load() }
func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }

// summaryEngine is an Irish OSS seller (fiscaltest.IrishSeller) whose
// account chose mode, with a VIES that knows the table's businesses.
func summaryEngine(t *testing.T, mode string, c *clock) *fiscal.Books {
	t.Helper()
	s := fiscaltest.IrishSeller
	s.Invoicing = mode
	cfg := fiscaltest.Config(t, c.now(), s)
	cfg.Clock = c.now
	cfg.VIES = fiscaltest.LawVIES(c.now())
	return fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
}

// issueOne issues the summary invoice q names (q.Buyer set).
func issueOne(ctx context.Context, b *fiscal.Books, q invoicing.SummaryRequest) (*invoicing.SummaryResult, error) {
	res, err := invoicing.Issue(ctx, b, q)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// crossingMonth is an Irish seller (fiscaltest.IrishSeller) invoicing by
// monthly summary whose 2026 total opens at EUR 9,990, just below the
// Art. 59c threshold (EUR 10,000, Directive 2006/112/EC), and its three
// April sales (5, 50 and 6 USDC, on the 10th, 11th and 12th) to one
// consumer in country: the first is taxed at origin, the second takes the
// seller over the threshold, the last is taxed in country under the OSS
// (the callers check what they need of that). Each is to be invoiced by
// the month's summary. The clock stands at 2026-04-20; wallet is the
// consumer's, the summary's buyer.
func crossingMonth(t *testing.T, country string) (c *clock, b *fiscal.Books, recs []*fiscal.Record, wallet string) {
	t.Helper()
	c = newClock(time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC))
	s := fiscaltest.IrishSeller
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	s.OverThreshold = false
	s.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "9990.00"}}
	cfg := fiscaltest.Config(t, c.now(), s)
	cfg.Clock = c.now
	b = fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	for i, amount := range []string{"5.00", "50.00", "6.00"} {
		res, err := b.Settle(context.Background(), fiscaltest.Request(i, amount, country, []string{"2026-04-10T10:00:00Z", "2026-04-11T10:00:00Z", "2026-04-12T10:00:00Z"}[i]), "")
		if err != nil {
			t.Fatal(err)
		}
		if inv := res.Record.Invoicing; inv == nil || inv.Invoice != "summary" {
			t.Fatalf("supply %d: invoicing %+v; want a summary", i, inv)
		}
		recs = append(recs, res.Record)
	}
	return c, b, recs, strings.ToLower(fiscaltest.Request(0, "1", country, "").PayerWallet)
}

// microAmount is payment i's amount: 1 to 9,700 micro-USDC (0.000001 to
// 0.0097), most of them below a cent.
func microAmount(i int) string {
	return decimal.New(int64(i%97+1)*int64(i%100+1), -6).String()
}

// TestSummaryInvoiceOfAMonth: a month of 10,000 payments by one consumer
// becomes one summary invoice with the next number of the series, whose
// VAT is the VAT this test computes itself on the summed amounts, that
// the validators accept, that every record links to and that issuing
// again returns unchanged.
func TestSummaryInvoiceOfAMonth(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 300
	}
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()

	// The account invoices per payment first: the series' first number.
	b := summaryEngine(t, fiscal.InvoicingPerPayment, c)
	first, err := b.Settle(ctx, fiscaltest.Request(n+1, "1.19", "DE", "2026-03-01T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Record.Invoice == nil || first.Record.Invoice.ID != "F402-2026-000001" || first.Record.Invoicing != nil {
		t.Fatalf("per payment: invoice %+v, invoicing %+v", first.Record.Invoice, first.Record.Invoicing)
	}
	// Then it chooses monthly summaries.
	s0 := b.Account().Seller
	s0.Invoicing = fiscal.InvoicingSummaryMonthly
	if err := b.Engine().SetAccounts(fiscaltest.Accounts(s0)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, b.Engine(), 0)

	// A business customer's payments: covered by a summary of their own.
	de := fiscaltest.LawBuyers()[0]
	var bizIDs []string
	for i := 0; i < 3; i++ {
		req := fiscaltest.LawRequest(n+10+i, de, true, true)
		req.Timestamp = fmt.Sprintf("2026-03-%02dT14:30:00Z", 10+i)
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice != nil || r.Invoicing == nil || r.Invoicing.Invoice != "summary" || r.Invoicing.Buyer != de.VATNumber {
			t.Fatalf("business sale: %s %v, invoice %+v, invoicing %+v; want its summary", r.ReviewStatus, r.ReviewReasons, r.Invoice, r.Invoicing)
		}
		bizIDs = append(bizIDs, r.ID)
	}

	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	step := 30 * 24 * time.Hour / time.Duration(n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	work := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				req := fiscaltest.Request(i, microAmount(i), "DE", start.Add(time.Duration(i)*step).Format(time.RFC3339))
				res, err := b.Settle(ctx, req, "")
				if err != nil {
					failed.Store(err)
					continue
				}
				ids[i] = res.Record.ID
				if inv := res.Record.Invoicing; res.Record.Invoice != nil || inv == nil || inv.Invoice != "summary" || inv.Period != "2026-03" {
					failed.Store(fmt.Errorf("payment %d: %s %v, invoice %+v, invoicing %+v; want the March summary", i, res.Record.ReviewStatus, res.Record.ReviewReasons, res.Record.Invoice, inv))
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
	q := invoicing.SummaryRequest{Period: "2026-03", Buyer: wallet}

	// March has not ended everywhere yet (the Azores: UTC−1).
	c.set(time.Date(2026, 4, 1, 0, 30, 0, 0, time.UTC))
	if _, err := issueOne(ctx, b, q); fiscaltest.Code(err) != fiscal.CodePeriodOpen {
		t.Fatalf("open month: %v, want PERIOD_OPEN", err)
	}
	c.set(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	buyers, err := invoicing.SummaryBuyers(b, "2026-03")
	if err != nil || len(buyers) != 2 || buyers[0].Buyer != wallet || buyers[0].TaxCountry != "IE" || buyers[1].Buyer != de.VATNumber {
		t.Fatalf("SummaryBuyers = %+v, %v", buyers, err)
	}
	res, err := issueOne(ctx, b, q)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if res.Outcome != fiscal.Created || s.Invoice.ID != "F402-2026-000002" || s.Supplied != n || len(s.Supplies) != n {
		t.Fatalf("summary %s: outcome %v, %d supplies; want Created, F402-2026-000002 (after the per-payment F402-2026-000001), %d", s.Invoice.ID, res.Outcome, s.Supplied, n)
	}

	// The VAT on the summed exact amounts, computed here from the ECB rate
	// and the German rate: Σ USDC ÷ rate = gross; net = gross ÷ 1.19.
	var usdc decimal.Decimal
	for i := 0; i < n; i++ {
		usdc = usdc.Add(decimal.RequireFromString(microAmount(i)))
	}
	var pct decimal.Decimal
	gross := decimal.Zero
	for i := 0; i < n; i++ {
		r, _, err := b.Record(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		pct = r.Classification.RatePercent.Decimal()
		peg := decimal.RequireFromString(r.FX.USDCUSD.Rate)
		gross = gross.Add(decimal.RequireFromString(microAmount(i)).Mul(peg).DivRound(decimal.RequireFromString(r.FX.USDPerEUR.Raw), 20))
	}
	net := gross.DivRound(decimal.NewFromInt(1).Add(pct.Shift(-2)), 16)
	wantVAT := gross.Sub(net).Round(2)
	if len(s.Totals) != 1 || s.Totals[0].VATEUR != wantVAT.StringFixed(2) || s.VATEUR != wantVAT.StringFixed(2) {
		t.Fatalf("summary VAT %s (totals %+v); this test computes %s on %s USDC", s.VATEUR, s.Totals, wantVAT.StringFixed(2), usdc)
	}
	t.Logf("%d payments, %s USDC: summary %s net %s VAT %s gross %s (test: VAT %s)", n, usdc, s.Invoice.ID, s.NetEUR, s.VATEUR, s.GrossEUR, wantVAT.StringFixed(2))

	// The invoice: stored, bound to its hash, accepted by the validators.
	got, u, err := invoicing.Summary(ctx, b, s.ID)
	if err != nil || got.Summary.Invoice.UBLSHA256 != s.Invoice.UBLSHA256 {
		t.Fatalf("Summary(%s) = %v", s.ID, err)
	}
	for _, want := range []string{"<cbc:ID>F402-2026-000002</cbc:ID>", "<cbc:StartDate>2026-03-01</cbc:StartDate>", "<cbc:EndDate>2026-03-31</cbc:EndDate>",
		"<cbc:TaxAmount currencyID=\"EUR\">" + wantVAT.StringFixed(2) + "</cbc:TaxAmount>"} {
		if !bytes.Contains(u, []byte(want)) {
			t.Errorf("summary UBL lacks %s", want)
		}
	}
	file := filepath.Join(t.TempDir(), "summary.xml")
	if err := os.WriteFile(file, u, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("FISCAL402_SUMMARY_UBL") != "" {
		_ = os.WriteFile(os.Getenv("FISCAL402_SUMMARY_UBL"), u, 0o600)
	}
	fiscaltest.ValidateUBL(t, []string{file}, false)

	// Every record links to it.
	for _, i := range []int{0, n / 2, n - 1} {
		by, err := invoicing.InvoicedBy(ctx, b, ids[i])
		if err != nil || by != s.ID {
			t.Errorf("InvoicedBy(%s) = %q, %v; want %s", ids[i], by, err, s.ID)
		}
	}
	if by, err := invoicing.InvoicedBy(ctx, b, first.Record.ID); err != nil || by != "" {
		t.Errorf("the per-payment sale is invoiced by %q, %v; want its own invoice", by, err)
	}

	// The business customer's: Peppol, reverse charge, the next number,
	// by the Art. 222 deadline.
	bizRes, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-03", Buyer: de.VATNumber})
	if err != nil {
		t.Fatal(err)
	}
	bs := bizRes.Summary
	if bs.Invoice.ID != "F402-2026-000003" || bs.Supplied != 3 || bs.Invoice.Profile != "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0" ||
		bs.Totals[0].Category != "AE" || bs.Invoice.IssueDeadline != "2026-04-15" || bs.Invoice.IssuedLate {
		t.Fatalf("business summary: %+v", bs)
	}
	_, bu, err := invoicing.Summary(ctx, b, bs.ID)
	if err != nil {
		t.Fatal(err)
	}
	bfile := filepath.Join(t.TempDir(), "business-summary.xml")
	if err := os.WriteFile(bfile, bu, 0o600); err != nil {
		t.Fatal(err)
	}
	fiscaltest.ValidateUBL(t, []string{bfile}, true)
	if by, err := invoicing.InvoicedBy(ctx, b, bizIDs[2]); err != nil || by != bs.ID {
		t.Errorf("InvoicedBy(business) = %q, %v", by, err)
	}

	// Issued again: the same invoice, no new number.
	again, err := issueOne(ctx, b, q)
	if err != nil || again.Outcome != fiscal.Existing || !bytes.Equal(again.JSON, res.JSON) {
		t.Fatalf("reissue: %v, outcome %v, same document %v", err, again.Outcome, again != nil && bytes.Equal(again.JSON, res.JSON))
	}

	// A late March payment, recorded after the summary: its own invoice.
	late, err := b.Settle(ctx, fiscaltest.Request(n+2, "0.04", "DE", "2026-03-31T12:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if late.Record.Invoice == nil || late.Record.Invoice.ID != "F402-2026-000004" {
		t.Fatalf("late payment: invoice %+v, invoicing %+v; want its own F402-2026-000004", late.Record.Invoice, late.Record.Invoicing)
	}
}

// TestBusinessInvoicedWhenNoneChosen: an account that chose none_b2c issues
// no invoice to a consumer under the OSS (Ireland requires none) and still
// invoices a business customer.
func TestBusinessInvoicedWhenNoneChosen(t *testing.T) {
	c := newClock(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	b := summaryEngine(t, fiscal.InvoicingNoneB2C, c)
	ctx := context.Background()
	consumer, err := b.Settle(ctx, fiscaltest.Request(1, "0.04", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	r := consumer.Record
	if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice != nil || r.Invoicing == nil || r.Invoicing.Invoice != "none" || !strings.Contains(r.Invoicing.Basis, "s. 66(1)(a)") {
		t.Fatalf("consumer sale: %s, invoice %+v, invoicing %+v; want no invoice with Ireland's rule", r.ReviewStatus, r.Invoice, r.Invoicing)
	}
	if rc, err := b.Receipt(ctx, r.ID); err != nil || len(rc) == 0 {
		t.Fatalf("the consumer sale has no receipt: %v", err)
	}
	if _, _, err := b.Invoice(ctx, r.ID); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Fatalf("Invoice of a sale without one: %v", err)
	}
	de := fiscaltest.LawBuyers()[0]
	biz, err := b.Settle(ctx, fiscaltest.LawRequest(2, de, true, true), "")
	if err != nil {
		t.Fatal(err)
	}
	if biz.Record.Invoice == nil || biz.Record.Invoice.ID != "F402-2026-000001" || biz.Record.Invoicing == nil || !strings.Contains(biz.Record.Invoicing.Basis, "Art. 220(1)(1)") {
		t.Fatalf("business sale: invoice %+v, invoicing %+v; want its own invoice under Art. 220(1)", biz.Record.Invoice, biz.Record.Invoicing)
	}
	if _, _, err := b.Invoice(ctx, biz.Record.ID); err != nil {
		t.Fatal(err)
	}
}

// TestSummaryFallsBackWithoutANationalRule: where the invoicing state's
// rule on summary invoices is not on file (a French OSS seller), the mode
// is not assumed: each payment gets its own invoice, and the record says
// why.
func TestSummaryFallsBackWithoutANationalRule(t *testing.T) {
	c := newClock(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	s := fiscaltest.IrishSeller
	s.Country, s.VATNumber, s.Invoicing = "FR", "FR40303265045", fiscal.InvoicingSummaryMonthly
	s.Address.Country, s.Address.PostalCode, s.Address.City = "FR", "75001", "Paris"
	cfg := fiscaltest.Config(t, c.now(), s)
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	res, err := b.Settle(context.Background(), fiscaltest.Request(1, "1.19", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if r.Invoice == nil || r.Invoicing == nil || r.Invoicing.Invoice != "per_payment" || !strings.Contains(r.Invoicing.Basis, "FR") {
		t.Fatalf("invoice %+v, invoicing %+v; want its own invoice and the reason", r.Invoice, r.Invoicing)
	}
}

// TestSummaryRacesLateSupplies: payments of a closed month keep arriving
// while its summary is issued. Whatever the order of commits, every one
// ends up either on the summary or with an invoice of its own, never
// neither.
func TestSummaryRacesLateSupplies(t *testing.T) {
	c := newClock(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := b.Settle(ctx, fiscaltest.Request(i, "0.05", "DE", "2026-03-20T09:00:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	}
	wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
	const late = 60
	ids := make([]string, late)
	var wg sync.WaitGroup
	var summary atomic.Pointer[invoicing.SummaryResult]
	for i := 0; i < late; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.Settle(ctx, fiscaltest.Request(100+i, "0.05", "DE", "2026-03-31T20:00:00Z"), "")
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.Record.ID
		}()
		if i == late/2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-03", Buyer: wallet})
				if err != nil {
					t.Error(err)
					return
				}
				summary.Store(res)
			}()
		}
	}
	wg.Wait()
	s := summary.Load()
	if s == nil {
		t.Fatal("no summary")
	}
	onSummary := map[string]bool{}
	for _, sup := range s.Summary.Supplies {
		onSummary[sup.RecordID] = true
	}
	own := 0
	for _, id := range ids {
		r, _, err := b.Record(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		by, err := invoicing.InvoicedBy(ctx, b, id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Invoice != nil && !onSummary[id] && by == "":
			own++
		case r.Invoice == nil && onSummary[id] && by == s.Summary.ID:
		default:
			t.Errorf("%s: own invoice %v, on the summary %v, invoiced by %q", id, r.Invoice != nil, onSummary[id], by)
		}
	}
	t.Logf("%d late supplies: %d on the summary (of %d), %d with their own invoice", late, len(onSummary)-5, s.Summary.Supplied, own)
}

package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/returns"
)

// exportLines runs the export in format and returns its lines as maps of
// column to value (CSV: by the header; JSON Lines: the members).
func exportLines(t *testing.T, b *fiscal.Books, format string) []map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := returns.Export(context.Background(), b, returns.ExportQuery{Format: format}, &buf); err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	if format == returns.FormatCSV {
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			m := map[string]string{}
			for i, h := range rows[0] {
				m[h] = r[i]
			}
			out = append(out, m)
		}
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k, v := range raw {
			m[k] = fmt.Sprint(v)
		}
		out = append(out, m)
	}
	return out
}

// TestExportNamesTheSummaryInvoice: the export gives each record its
// invoice number (README "The OSS return, records on request and the
// export"; OpenAPI exportSettlements: "invoice number"). A supply of an
// account that invoices monthly (summary_monthly) has no invoice of its
// own: the invoice that covers it is its buyer's summary for the month
// (Art. 223 Directive 2006/112/EC), whose number is the supply's invoice
// number (Art. 226(2): the invoice's sequential number). Until the
// summary is issued there is none yet, and the line must say so rather
// than leave an invoice number empty as for a supply no invoice covers;
// once it is issued, the line names the summary's number.
func TestExportNamesTheSummaryInvoice(t *testing.T) {
	ctx := context.Background()
	s := ossSeller()
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	cfg := fiscaltest.Config(t, testNow, s)
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	var ids []string
	for i := 0; i < 2; i++ {
		res, err := b.Settle(ctx, fiscaltest.Request(i, "1.50", "DE", fmt.Sprintf("2026-02-%02dT10:00:00Z", 2+i)), fmt.Sprint("s-", i))
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.Invoice != nil || res.Record.Invoicing == nil || res.Record.Invoicing.Invoice != invoicing.CoveredBySummary {
			t.Fatalf("record %s: invoice %+v, invoicing %+v: the test needs a supply a summary covers", res.Record.ID, res.Record.Invoice, res.Record.Invoicing)
		}
		ids = append(ids, res.Record.ID)
	}
	for _, format := range []string{returns.FormatCSV, returns.FormatJSONL} {
		for _, l := range exportLines(t, b, format) {
			if l["invoiceNumber"] != "" || l["invoiceCoverage"] != invoicing.CoveredLater {
				t.Errorf("%s, before the summary: line %s has invoiceNumber %q and invoiceCoverage %q; want no number and %q (its summary is still to be issued)",
					format, l["id"], l["invoiceNumber"], l["invoiceCoverage"], invoicing.CoveredLater)
			}
		}
	}
	res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-02"})
	if err != nil || len(res) != 1 || res[0].Summary == nil {
		t.Fatalf("summary: %v %+v", err, res)
	}
	number := res[0].Summary.Invoice.ID
	for _, format := range []string{returns.FormatCSV, returns.FormatJSONL} {
		lines := exportLines(t, b, format)
		if len(lines) != len(ids) {
			t.Fatalf("%s: %d lines, want %d", format, len(lines), len(ids))
		}
		for _, l := range lines {
			if l["invoiceNumber"] != number || l["invoiceCoverage"] != invoicing.CoveredBySummary {
				t.Errorf("%s, after the summary: line %s has invoiceNumber %q and invoiceCoverage %q; want the summary's number %q and %q",
					format, l["id"], l["invoiceNumber"], l["invoiceCoverage"], number, invoicing.CoveredBySummary)
			}
		}
	}
}

// TestExportStatesTheFiguresOfAnInvoiceIssuedAlone: a supply of a month
// whose summary cannot be issued is invoiced on its own
// (invoicing.IssueAlone), a document like a summary's: its taxable amount
// the supply's exact net rounded once, its VAT that amount times the
// rate, rounded (EN 16931 BR-CO-17). Its record's cent figures round the
// exact VAT instead, so for some micro amounts the two differ by a cent
// (net 0.03, VAT 0.00 on the record; VAT 0.01 on the invoice). The export
// states a record's cent figures as those of its document: for such a
// supply, the invoice's, with its number.
func TestExportStatesTheFiguresOfAnInvoiceIssuedAlone(t *testing.T) {
	ctx := context.Background()
	s := ossSeller()
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, testNow, s)), 0)
	var differs *fiscal.Record
	for i := 0; i < 60 && differs == nil; i++ {
		amount := fmt.Sprintf("0.%03d", 20+i)
		res, err := b.Settle(ctx, fiscaltest.Request(i, amount, "DE", fmt.Sprintf("2026-02-%02dT10:00:00Z", 2+i%20)), fmt.Sprint("s-", i))
		if err != nil {
			t.Fatal(err)
		}
		fxr := res.Record.FX
		net := decimal.RequireFromString(fxr.NetEURExact).Round(2)
		brco17 := net.Mul(decimal.NewFromInt(19)).Shift(-2).Round(2) // BR-CO-17, half away from zero
		if !brco17.Equal(decimal.RequireFromString(fxr.VATEUR)) {
			differs = res.Record
		}
	}
	if differs == nil {
		t.Fatal("no amount tried has a record VAT a cent off its taxable amount × rate")
	}
	res, err := invoicing.IssueAlone(ctx, b, differs, "the test invoices it alone")
	if err != nil {
		t.Fatal(err)
	}
	inv := res.Summary
	if len(inv.Totals) != 1 {
		t.Fatalf("totals %+v", inv.Totals)
	}
	tot := inv.Totals[0]
	if tot.VATEUR == differs.FX.VATEUR {
		t.Fatalf("the invoice's VAT %s is the record's: the test needs them a cent apart", tot.VATEUR)
	}
	for _, format := range []string{returns.FormatCSV, returns.FormatJSONL} {
		for _, l := range exportLines(t, b, format) {
			if l["id"] != differs.ID {
				continue
			}
			if l["invoiceNumber"] != inv.Invoice.ID || l["netEur"] != tot.NetEUR || l["vatEur"] != tot.VATEUR || l["grossEur"] != inv.GrossEUR {
				t.Errorf("%s: the line of %s states invoice %q, net %s, VAT %s, gross %s; its invoice %s states net %s, VAT %s, gross %s (the record: %s, %s, %s)",
					format, differs.ID, l["invoiceNumber"], l["netEur"], l["vatEur"], l["grossEur"], inv.Invoice.ID, tot.NetEUR, tot.VATEUR, inv.GrossEUR,
					differs.FX.NetEUR, differs.FX.VATEUR, differs.FX.GrossEUR)
			}
			if l["vatEurExact"] != differs.FX.VATEURExact {
				t.Errorf("%s: the exact VAT %s, want the record's %s", format, l["vatEurExact"], differs.FX.VATEURExact)
			}
		}
	}
	// The records on request (Art. 63c(1)(d), (g), (j)) state it alike.
	found := false
	if err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "DE"}, func(r returns.RecordRow) error {
		if r.RecordID != differs.ID {
			return nil
		}
		found = true
		if r.Invoice == nil || r.Invoice.Number != inv.Invoice.ID || r.TaxableAmount != tot.NetEUR || r.VATAmount != tot.VATEUR {
			t.Errorf("the record row states invoice %+v, taxable amount %s, VAT %s; its invoice %s states %s and %s", r.Invoice, r.TaxableAmount, r.VATAmount, inv.Invoice.ID, tot.NetEUR, tot.VATEUR)
		}
		return nil
	}); err != nil || !found {
		t.Fatalf("records: %v, found %v", err, found)
	}
}

// TestRecordsNameTheSummaryInvoice: the records a member state of
// consumption may ask for (Art. 63c(1)(j) Implementing Regulation (EU) No
// 282/2011: "where an invoice is issued, the information contained on
// the invoice") of a supply a summary invoice covers listed the invoice
// as missing ("the supply is on the summary invoice of its buyer") even
// once that summary was issued, though the ledger holds its number, date
// and UBL hash: once issued, the row names it, and says nothing is
// missing of it.
func TestRecordsNameTheSummaryInvoice(t *testing.T) {
	ctx := context.Background()
	s := ossSeller()
	s.Invoicing = fiscal.InvoicingSummaryMonthly
	b := fiscaltest.Books(t, fiscaltest.Engine(t, fiscaltest.Config(t, testNow, s)), 0)
	if _, err := b.Settle(ctx, fiscaltest.Request(1, "1.50", "DE", "2026-02-03T10:00:00Z"), "s-1"); err != nil {
		t.Fatal(err)
	}
	res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-02"})
	if err != nil || len(res) != 1 || res[0].Summary == nil {
		t.Fatalf("summary: %v %+v", err, res)
	}
	inv := res[0].Summary.Invoice
	var rows []returns.RecordRow
	if err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "DE"}, func(r returns.RecordRow) error {
		rows = append(rows, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Invoice == nil || r.Invoice.Number != inv.ID || r.Invoice.IssueDate != inv.IssueDate || r.Invoice.UBLSHA256 != inv.UBLSHA256 {
		t.Errorf("the row's invoice %+v; want the summary's %s of %s (%s)", r.Invoice, inv.ID, inv.IssueDate, inv.UBLSHA256)
	}
	for _, m := range r.Missing {
		if strings.HasPrefix(m, "(j)") {
			t.Errorf("the row says the invoice is missing: %q", m)
		}
	}
}

package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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

package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
)

// TestRecordsOnRequest: the records of Germany's Q1 supplies carry each
// Art. 63c(1) item the ledger holds and name the missing ones.
func TestRecordsOnRequest(t *testing.T) {
	b := newBooks(t, testNow)
	recs := settle(t, b, 1, quarterSales...)
	ctx := context.Background()
	// A refund of one German sale, recorded after the quarter: the
	// supply's record shows it as a later reduction (Art. 63c(1)(e)).
	var refunded string
	for _, r := range recs {
		if r.Classification.TaxingCountry == "DE" && r.Settlement.AmountUSDC == "10.70" {
			refunded = r.Receipt.ID
			refund(t, b, r.ID, "5.35", "half")
		}
	}
	var rows []returns.RecordRow
	err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "de"}, func(r returns.RecordRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*fiscal.Record{}
	for _, r := range recs {
		if r.Classification.TaxingCountry == "DE" && r.Classification.Regime == "OSS_B2C" && strings.HasPrefix(r.Classification.SupplyDate, "2026-0") {
			want[r.Receipt.ID] = r
		}
	}
	if len(rows) != 2 || len(want) != 2 {
		t.Fatalf("%d rows, %d German supplies", len(rows), len(want))
	}
	for _, row := range rows {
		r := want[row.ReceiptID]
		if r == nil {
			t.Fatalf("row %s is no German supply of Q1", row.ReceiptID)
		}
		if row.MemberState != "DE" || row.SupplyType != "services" || row.SupplyDate != r.Classification.SupplyDate ||
			row.TaxableAmount != r.FX.NetEUR || row.TaxableCurrency != "EUR" || row.RatePercent != r.Classification.RatePercent.String() ||
			row.VATAmount != r.FX.VATEUR || row.Payments[0].Amount != r.Settlement.AmountUSDC || row.Payments[0].Currency != "USDC" ||
			row.Payments[0].TxHash != r.Settlement.TxHash || row.Invoice == nil || row.Invoice.Number != r.Invoice.ID ||
			row.Location.Country != "DE" || row.LedgerIndex != r.Ledger.Index {
			t.Errorf("row %+v\nrecord %+v", row, r)
		}
		if row.ReceiptID == refunded {
			if len(row.Adjustments) != 1 || row.Adjustments[0].RefundedUSDC != "5.350000" || !strings.HasPrefix(row.Adjustments[0].TaxableAmount, "-") ||
				row.Adjustments[0].CreditNote == "" || row.Adjustments[0].Date != "2026-04-13" {
				t.Errorf("adjustments %+v", row.Adjustments)
			}
		} else if len(row.Adjustments) != 0 {
			t.Errorf("adjustments of an unrefunded supply: %+v", row.Adjustments)
		}
		joined := strings.Join(row.Missing, "|")
		if !strings.Contains(joined, "(i) payments on account") || !strings.Contains(joined, "(k) the name of the customer") {
			t.Errorf("missing %v", row.Missing)
		}
	}
	// CSV: a header and a row per supply.
	var buf bytes.Buffer
	cw, _ := returns.NewRecordsCSV(&buf)
	if err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "DE"}, cw.Write); err != nil {
		t.Fatal(err)
	}
	_ = cw.Flush()
	all, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(all) != 3 || len(all[1]) != len(returns.RecordsCSVHeader) {
		t.Fatalf("CSV %d rows: %v", len(all), err)
	}
	// A country that is no member state is refused; Monaco too, although
	// it is treated as France (Art. 7(1) Directive 2006/112/EC): France,
	// not Monaco, is the member state of consumption of a customer there,
	// and asks for the records (isEU).
	for _, ms := range []string{"US", "GB", "XX", "MC"} {
		err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: ms}, func(returns.RecordRow) error { return nil })
		if fiscaltest.Code(err) != fiscal.CodeBadRequest {
			t.Errorf("%s: %v", ms, err)
		}
	}
}

// TestExport: one line per record in both formats, the fields an
// accountant imports, streamed.
func TestExport(t *testing.T) {
	b := newBooks(t, testNow)
	recs := settle(t, b, 1, quarterSales...)
	ctx := context.Background()
	rf := refund(t, b, recs[0].ID, "1.07", "export-refund")
	var buf bytes.Buffer
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatJSONL}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(recs)+1 {
		t.Fatalf("%d lines for %d records and a refund", len(lines), len(recs))
	}
	var last returns.ExportLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "refund" || last.ID != rf.ID ||
		last.AmountUSDC != "-1.070000" || !strings.HasPrefix(last.VATEUR, "-") || last.InvoiceNumber != rf.CreditNote.ID || last.ReceiptID != rf.Receipt.ID {
		t.Fatalf("refund line %+v (%v)", last, err)
	}
	// The refund names no transfer: its line states none, not the sale's
	// (a review found the sale's hash on the refund's line, a refund
	// transfer the chain does not hold).
	if last.TxHash != "" {
		t.Errorf("the line of a refund without a transfer states tx hash %s (the sale's is %s)", last.TxHash, recs[0].Settlement.TxHash)
	}
	lines = lines[:len(lines)-1]
	byID := map[string]*fiscal.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for _, l := range lines {
		var e returns.ExportLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		r := byID[e.ID]
		if r == nil || e.Type != "settlement" || e.AmountUSDC != r.Settlement.AmountUSDC || e.VATEUR != r.FX.VATEUR || e.ReviewStatus != r.ReviewStatus ||
			e.ReceiptID != r.Receipt.ID || e.TxHash != r.Settlement.TxHash || e.Country != r.Classification.TaxingCountry {
			t.Errorf("line %s\nrecord %+v", l, r)
		}
		if r.Invoice != nil && e.InvoiceNumber != r.Invoice.ID {
			t.Errorf("invoice %s, want %s", e.InvoiceNumber, r.Invoice.ID)
		}
	}
	buf.Reset()
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatCSV, From: testNow.Add(-time.Hour), To: testNow}, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != len(recs)+2 || strings.Join(rows[0], ",") != strings.Join(returns.ExportCSVHeader, ",") {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	// Nothing recorded before the range: only the header.
	buf.Reset()
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatCSV, To: testNow.Add(-time.Hour)}, &buf); err != nil || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("empty range: %q %v", buf.String(), err)
	}
	buf.Reset()
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: "xml"}, &buf); fiscaltest.Code(err) != fiscal.CodeBadRequest || buf.Len() != 0 {
		t.Fatalf("bad format: %v, wrote %d bytes", err, buf.Len())
	}
}

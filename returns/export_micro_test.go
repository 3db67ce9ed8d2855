package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/returns"
)

// TestExportKeepsMicropaymentVAT: the export is what an accountant imports
// (README "The OSS return, records on request and the export"); a record's
// cent figures are those of its own invoice, and the engine declares from
// the exact ones (fiscal.RecordFX: "declare from the
// exact ones"; a return adds the exact amounts of its supplies and rounds
// once, Art. 369h(2) Directive 2006/112/EC for the conversion, Art. 73
// for the taxable amount: the whole consideration). A 0.001 USDC call
// carries VAT of about EUR 0.00015, which is 0.00 to the cent: an export
// of cent figures alone loses it, and the sum of a quarter's exported
// lines is not what the invoices charged in total. Over random micro
// amounts (1 to 10,000 micro-USDC) to member states at 17 %, 27 %, 19 %
// and 5.5 % (e-books in France) and partial refunds, the exported lines'
// exact figures, summed per member state and rate and rounded once, must
// be the OSS return line's invoice figures, exactly, in both formats.
func TestExportKeepsMicropaymentVAT(t *testing.T) {
	ctx := context.Background()
	b, setClock := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	rnd := rand.New(rand.NewPCG(402, 1))
	countries := []string{"LU", "HU", "DE", "FR"}
	var sales []sale
	for i := 0; i < 160; i++ {
		c := countries[rnd.IntN(len(countries))]
		kind := ""
		if c == "FR" {
			kind = "ebook"
		}
		amount := decimal.New(int64(1+rnd.IntN(10000)), -6).String()
		sales = append(sales, sale{amount, c, kind, "", fmt.Sprintf("2026-03-%02dT10:%02d:00Z", 1+rnd.IntN(18), rnd.IntN(60))})
	}
	recs := settle(t, b, 7000, sales...)
	setClock(time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC))
	for i, r := range recs {
		if i%5 != 0 {
			continue
		}
		amount := decimal.RequireFromString(r.Settlement.AmountUSDC)
		part := decimal.New(1+rnd.Int64N(amount.Shift(6).IntPart()), -6)
		refund(t, b, r.ID, part.String(), fmt.Sprint("micro-export-", i))
	}
	setClock(testNow)
	ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Lines) != len(countries) {
		t.Fatalf("%d lines, want %d: %+v", len(ret.Lines), len(countries), ret.Lines)
	}

	type sums struct{ net, vat, cents decimal.Decimal }
	check := func(format string, lines []map[string]string) {
		got := map[string]*sums{}
		for _, l := range lines {
			if l["regime"] != "OSS_B2C" {
				continue
			}
			k := l["country"] + "|" + l["ratePercent"]
			s := got[k]
			if s == nil {
				s = &sums{}
				got[k] = s
			}
			ne, err1 := decimal.NewFromString(l["netEurExact"])
			ve, err2 := decimal.NewFromString(l["vatEurExact"])
			ge, err3 := decimal.NewFromString(l["grossEurExact"])
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatalf("%s: line %s has no exact figures (netEurExact %q, vatEurExact %q, grossEurExact %q): its VAT of a micropayment is lost to the cent figures (vatEur %s)",
					format, l["id"], l["netEurExact"], l["vatEurExact"], l["grossEurExact"], l["vatEur"])
			}
			if !ne.Add(ve).Equal(ge) {
				t.Errorf("%s: line %s: exact net %s + VAT %s is not the exact gross %s", format, l["id"], ne, ve, ge)
			}
			s.net, s.vat = s.net.Add(ne), s.vat.Add(ve)
			s.cents = s.cents.Add(decimal.RequireFromString(l["vatEur"]))
		}
		for _, line := range ret.Lines {
			s := got[line.MemberState+"|"+line.RatePercent]
			if s == nil {
				t.Errorf("%s: no exported line for the return's %s %s %%", format, line.MemberState, line.RatePercent)
				continue
			}
			if n, v := fx.RoundEUR(s.net).StringFixed(2), fx.RoundEUR(s.vat).StringFixed(2); n != line.InvoiceTaxableAmountEUR || v != line.InvoiceVATEUR {
				t.Errorf("%s: %s %s %%: the export's exact net %s and VAT %s rounded once; the return's invoice figures %s and %s",
					format, line.MemberState, line.RatePercent, n, v, line.InvoiceTaxableAmountEUR, line.InvoiceVATEUR)
			}
			t.Logf("%s %s %s %%: %d records, VAT %s (sum of the cent figures: %s)", format, line.MemberState, line.RatePercent, line.Records, line.InvoiceVATEUR, s.cents.StringFixed(2))
		}
	}

	var buf bytes.Buffer
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatJSONL}, &buf); err != nil {
		t.Fatal(err)
	}
	var jl []map[string]string
	for _, raw := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		l := map[string]string{}
		for k, v := range m {
			if s, ok := v.(string); ok {
				l[k] = s
			}
		}
		jl = append(jl, l)
	}
	check("jsonl", jl)

	buf.Reset()
	if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatCSV}, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	var cl []map[string]string
	for _, row := range rows[1:] {
		l := map[string]string{}
		for i, h := range rows[0] {
			l[h] = row[i]
		}
		cl = append(cl, l)
	}
	check("csv", cl)
}

// TestRecordsKeepMicroRefundReductions: the records a member state of
// consumption asks for (Art. 63c(1) Implementing Regulation (EU) No
// 282/2011: (d) the taxable amount, (e) any later reduction of it, (g) the
// VAT) state each supply's exact figures beside the invoice's cents; a
// refund of part of a micropayment reduces the taxable amount and VAT by
// a fraction of a cent, 0.00 on its credit note. The reductions must be
// stated as exactly as the supply, so that a state adding a quarter's
// records (each supply's exact figures and its reductions, rounded once)
// gets what the OSS return line declares from the same ledger.
func TestRecordsKeepMicroRefundReductions(t *testing.T) {
	ctx := context.Background()
	b, setClock := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	rnd := rand.New(rand.NewPCG(402, 2))
	var sales []sale
	for i := 0; i < 60; i++ {
		amount := decimal.New(int64(1+rnd.IntN(10000)), -6).String()
		sales = append(sales, sale{amount, "HU", "", "", fmt.Sprintf("2026-03-%02dT09:%02d:00Z", 1+rnd.IntN(18), rnd.IntN(60))})
	}
	recs := settle(t, b, 8000, sales...)
	setClock(time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC))
	for i, r := range recs {
		if i%2 != 0 {
			continue
		}
		amount := decimal.RequireFromString(r.Settlement.AmountUSDC)
		part := decimal.New(1+rnd.Int64N(amount.Shift(6).IntPart()), -6)
		refund(t, b, r.ID, part.String(), fmt.Sprint("micro-records-", i))
	}
	setClock(testNow)
	ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil || len(ret.Lines) != 1 {
		t.Fatalf("return: %v, lines %+v", err, ret)
	}
	line := ret.Lines[0]
	var net, vat decimal.Decimal
	adjusted := 0
	err = returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "HU"}, func(row returns.RecordRow) error {
		net = net.Add(decimal.RequireFromString(row.TaxableAmountExact))
		vat = vat.Add(decimal.RequireFromString(row.VATAmountExact))
		for _, a := range row.Adjustments {
			an, err1 := decimal.NewFromString(a.TaxableAmountExact)
			av, err2 := decimal.NewFromString(a.VATAmountExact)
			if err1 != nil || err2 != nil {
				t.Fatalf("record %s: the reduction of %s USDC states no exact figures (taxable amount %s, VAT %s to the cent only)",
					row.RecordID, a.RefundedUSDC, a.TaxableAmount, a.VATAmount)
			}
			net, vat = net.Add(an), vat.Add(av)
			adjusted++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if adjusted != (len(recs)+1)/2 {
		t.Fatalf("%d reductions, want %d", adjusted, (len(recs)+1)/2)
	}
	if n, v := fx.RoundEUR(net).StringFixed(2), fx.RoundEUR(vat).StringFixed(2); n != line.InvoiceTaxableAmountEUR || v != line.InvoiceVATEUR {
		t.Errorf("the records' exact taxable amount %s and VAT %s, reductions included, rounded once; the return line's %s and %s",
			n, v, line.InvoiceTaxableAmountEUR, line.InvoiceVATEUR)
	}
}

package ubl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func grB2B(id string) Invoice {
	inv := b2b(id, sellerGR, buyerGRBusiness, line("x", "100.00", "S", "24"))
	inv.MyDATA = &MyDATA{MARK: "400001234567890", URL: "https://invoices.example.gr/1"}
	return inv
}

const grID = "998877666|20/11/2026|0|2.1|F402|000130"

func TestGreekTIN(t *testing.T) {
	for tin, ok := range map[string]bool{
		"998877666": true, "800123456": true, "094259216": true, "123456783": true,
		"998877665": false, "12345678": false, "1234567890": false, "12345678X": false, "": false,
	} {
		if greekTINOK(tin) != ok {
			t.Errorf("greekTINOK(%q) = %v", tin, !ok)
		}
	}
}

func TestGreekInvoiceNumber(t *testing.T) {
	got, err := GreekInvoiceNumber("998877666", "2026-11-05", 3, GreekDocTypeCreditNote, "F402-CN", "000007")
	if err != nil || got != "998877666|05/11/2026|3|5.1|F402-CN|000007" {
		t.Errorf("= %q, %v", got, err)
	}
	for _, tc := range []struct {
		args  []string
		field string
	}{
		{[]string{"998877665", "2026-11-05", "2.1", "A", "1"}, "tin"},
		{[]string{"998877666", "05/11/2026", "2.1", "A", "1"}, "issueDate"},
		{[]string{"998877666", "2026-11-05", "3.1", "A", "1"}, "docType"},
		{[]string{"998877666", "2026-11-05", "2.1", "A|B", "1"}, "series"},
		{[]string{"998877666", "2026-11-05", "2.1", "A", ""}, "number"},
	} {
		_, err := GreekInvoiceNumber(tc.args[0], tc.args[1], 0, tc.args[2], tc.args[3], tc.args[4])
		if err == nil || !strings.Contains(err.Error(), "ubl: "+tc.field+":") {
			t.Errorf("%q: err = %v, want a problem on %s", tc.args, err, tc.field)
		}
	}
	if _, err := GreekInvoiceNumber("998877666", "2026-11-05", -1, "2.1", "A", "1"); err == nil {
		t.Error("negative branch accepted")
	}
}

func TestGreekRejects(t *testing.T) {
	tests := []struct {
		name string
		inv  func() Invoice
		want wantProblem
	}{
		{"no myDATA", func() Invoice { i := grB2B(grID); i.MyDATA = nil; return i }, wantProblem{"MyDATA", "GR-R-004-1", ErrRequired}},
		{"MARK not a number", func() Invoice { i := grB2B(grID); i.MyDATA.MARK = "0123"; return i }, wantProblem{"MyDATA.MARK", "GR-R-004-2", ErrFormat}},
		{"no invoice URL", func() Invoice { i := grB2B(grID); i.MyDATA.URL = ""; return i }, wantProblem{"MyDATA.URL", "GR-R-008-3", ErrRequired}},
		{"seller TIN check digit", func() Invoice { i := grB2B(grID); i.Seller.VATNumber = "EL998877665"; return i }, wantProblem{"Seller.VATNumber", "GR-R-003", ErrFormat}},
		{"seller with a GR prefix", func() Invoice { i := grB2B(grID); i.Seller.VATNumber = "GR998877666"; return i }, wantProblem{"Seller.VATNumber", "GR-R-003", ErrFormat}},
		{"number of another TIN", func() Invoice {
			return grB2B("800123456|20/11/2026|0|2.1|F402|000130")
		}, wantProblem{"ID", "GR-R-001-2", ErrFormat}},
		{"number with another date", func() Invoice {
			return grB2B("998877666|21/11/2026|0|2.1|F402|000130")
		}, wantProblem{"ID", "GR-R-001-3", ErrFormat}},
		{"number with a one-digit month", func() Invoice {
			i := grB2B("998877666|05/1/2026|0|2.1|F402|000130")
			i.IssueDate = "2026-01-05"
			return i
		}, wantProblem{"ID", "GR-R-001-3", ErrFormat}},
		{"number with a negative branch", func() Invoice { return grB2B("998877666|20/11/2026|-1|2.1|F402|000130") }, wantProblem{"ID", "GR-R-001-4", ErrFormat}},
		{"number with an unknown type", func() Invoice { return grB2B("998877666|20/11/2026|0|2.2|F402|000130") }, wantProblem{"ID", "GR-R-001-5", ErrCode}},
		{"number without series", func() Invoice { return grB2B("998877666|20/11/2026|0|2.1||000130") }, wantProblem{"ID", "GR-R-001-6", ErrRequired}},
		{"invoice with a credit-invoice type", func() Invoice { return grB2B("998877666|20/11/2026|0|5.1|F402|000130") }, wantProblem{"ID", "GR-R-001-5", ErrMismatch}},
		{"seller endpoint not 9933", func() Invoice {
			i := grB2B(grID)
			i.Seller.EndpointID, i.Seller.EndpointScheme = "5391234500004", "0088"
			return i
		}, wantProblem{"Seller.EndpointID", "GR-R-009", ErrFormat}},
		{"Greek buyer without VAT id", func() Invoice {
			i := grB2B(grID)
			i.Buyer.VATNumber, i.Buyer.EndpointID, i.Buyer.EndpointScheme = "", "800123456", "9933"
			return i
		}, wantProblem{"Buyer.VATNumber", "GR-R-006", ErrFormat}},
		{"Greek buyer endpoint not a TIN", func() Invoice {
			i := grB2B(grID)
			i.Buyer.EndpointID, i.Buyer.EndpointScheme = "EL800123456", "9933"
			return i
		}, wantProblem{"Buyer.EndpointID", "GR-R-010", ErrFormat}},
		{"category O from a Greek seller", func() Invoice {
			i := b2b(grID, sellerGR, buyerCHBusiness, line("x", "100.00", "O", "0"))
			i.Seller.EndpointID, i.Seller.EndpointScheme = "998877666", "9933"
			i.MyDATA = &MyDATA{MARK: "1", URL: "https://invoices.example.gr/1"}
			return i
		}, wantProblem{"Lines", "GR-S-011", ErrUnsupported}},
		{"myDATA for an Irish seller", func() Invoice {
			i := b2b("x", sellerIE, buyerDEBusiness, line("x", "100.00", "AE", "0"))
			i.MyDATA = &MyDATA{MARK: "1", URL: "https://x.example/1"}
			return i
		}, wantProblem{"MyDATA", "", ErrForbidden}},
	}
	if _, err := RenderInvoice(grB2B(grID)); err != nil {
		t.Fatalf("base case: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderInvoice(tc.inv())
			expectProblem(t, out, err, tc.want)
		})
	}
}

// TestGreekRulesAgainstPeppol renders Greek documents with numbers and
// endpoints the Go checks accept or reject, bypassing those checks, and
// runs the Peppol artefact over them: it must find a GR rule exactly where
// the Go checks do. Skipped without PEPPOL_XSLT.
func TestGreekRulesAgainstPeppol(t *testing.T) {
	x := schematronLayer(t, "PEPPOL_XSLT", "the Peppol BIS 3.0 layer")
	cases := []struct {
		id, issue, sellerEP, buyerEP string
		ok                           bool
	}{
		{grID, "2026-11-20", "998877666", "800123456", true},
		{"998877666|05/01/2026|12|2.4|A|1", "2026-01-05", "998877666", "800123456", true},
		{"998877666|20/11/2026|0|2.1|F402", "2026-11-20", "998877666", "800123456", false},
		{"800123456|20/11/2026|0|2.1|F402|1", "2026-11-20", "998877666", "800123456", false},
		{"998877666|20-11-2026|0|2.1|F402|1", "2026-11-20", "998877666", "800123456", false},
		{"998877666|5/1/2026|0|2.1|F402|1", "2026-01-05", "998877666", "800123456", false},
		{"998877666|20/11/2026|x|2.1|F402|1", "2026-11-20", "998877666", "800123456", false},
		{"998877666|20/11/2026|0|3.1|F402|1", "2026-11-20", "998877666", "800123456", false},
		{"998877666|20/11/2026|0|2.1||1", "2026-11-20", "998877666", "800123456", false},
		{grID, "2026-11-20", "EL998877666", "800123456", false},
		{grID, "2026-11-20", "998877666", "800123457", false},
	}
	dir := t.TempDir()
	var files []string
	for i, tc := range cases {
		inv := grB2B(tc.id)
		inv.IssueDate = tc.issue
		inv.Seller.EndpointID, inv.Seller.EndpointScheme = tc.sellerEP, "9933"
		inv.Buyer.EndpointID, inv.Buyer.EndpointScheme = tc.buyerEP, "9933"
		c := &checker{}
		p := &prepared{kind: kindInvoice, inv: &inv, writeVAT: true, seller: endpoint{tc.sellerEP, "9933"}, buyer: endpoint{tc.buyerEP, "9933"}, greekSeller: true}
		checkGreek(c, p)
		if goOK := c.err() == nil; goOK != tc.ok {
			t.Errorf("case %d: Go checks say ok=%v: %v", i, goOK, c.err())
		}
		raw, err := prepare(ptr(grB2B(grID)), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw.inv.ID, raw.inv.IssueDate = tc.id, tc.issue
		raw.seller, raw.buyer = endpoint{tc.sellerEP, "9933"}, endpoint{tc.buyerEP, "9933"}
		out, _ := raw.render()
		f := filepath.Join(dir, fmt.Sprintf("gr-%02d.xml", i))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	report, _ := validateUBL(t, files, "", x)
	for i, tc := range cases {
		var findings []string
		for _, l := range strings.Split(report, "\n") {
			if strings.HasPrefix(l, files[i]+":") {
				findings = append(findings, l)
			}
		}
		if (len(findings) == 0) != tc.ok {
			t.Errorf("case %d (%s, %s): Peppol artefact findings %q, Go checks ok=%v", i, tc.id, tc.sellerEP, findings, tc.ok)
		}
		for _, f := range findings {
			if !strings.Contains(f, "] GR-") {
				t.Errorf("case %d: finding outside the GR rules: %s", i, f)
			}
		}
	}
}

func TestGreekCreditNote(t *testing.T) {
	id, err := GreekInvoiceNumber("998877666", "2026-11-25", 0, GreekDocTypeCreditNote, "F402-CN", "000001")
	if err != nil {
		t.Fatal(err)
	}
	cn := CreditNote{Invoice: grB2B(id), InvoiceRef: grID, InvoiceIssueDate: "2026-11-20"}
	cn.IssueDate = "2026-11-25"
	if _, err := RenderCreditNote(cn); err != nil {
		t.Fatalf("Greek credit note: %v", err)
	}
	cn.ID = "998877666|25/11/2026|0|2.1|F402-CN|000001"
	out, err := RenderCreditNote(cn)
	expectProblem(t, out, err, wantProblem{"ID", "GR-R-001-5", ErrMismatch})
}

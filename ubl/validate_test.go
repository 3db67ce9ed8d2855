package ubl

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// A problem the renderer must report: field, rule and sentinel.
type wantProblem struct {
	field, rule string
	err         error
}

func TestRejects(t *testing.T) {
	deB2B := func() Invoice {
		return b2b("x", sellerDE, buyerDEBusiness, line("Item", "840.34", "S", "19"))
	}
	aeB2B := func() Invoice { return b2b("x", sellerIE, buyerDEBusiness, line("Item", "100.00", "AE", "0")) }
	tests := []struct {
		name   string
		inv    func() Invoice
		credit bool
		want   wantProblem
	}{
		{"currency USDC", mut(func(i *Invoice) { i.Currency = "USDC" }), false, wantProblem{"Currency", "BR-CL-04", ErrCode}},
		{"currency gold", mut(func(i *Invoice) { i.Currency = "XAU" }), false, wantProblem{"Currency", "BR-CL-04", ErrCode}},
		{"currency missing", mut(func(i *Invoice) { i.Currency = "" }), false, wantProblem{"Currency", "BR-05", ErrRequired}},
		{"currency lower case", mut(func(i *Invoice) { i.Currency = "eur" }), false, wantProblem{"Currency", "BR-CL-04", ErrCode}},
		{"profile missing", mut(func(i *Invoice) { i.Profile = "" }), false, wantProblem{"Profile", "BR-01", ErrRequired}},
		{"profile unknown", mut(func(i *Invoice) { i.Profile = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0" }), false, wantProblem{"Profile", "BR-01", ErrCode}},
		{"id with newline", mut(func(i *Invoice) { i.ID = "x402-\n1" }), false, wantProblem{"ID", "BR-02", ErrFormat}},
		{"payment id with surrounding space", mut(func(i *Invoice) { i.PaymentMeans.PaymentID = " 0xabc" }), false, wantProblem{"PaymentMeans.PaymentID", "", ErrFormat}},
		{"id missing", mut(func(i *Invoice) { i.ID = "" }), false, wantProblem{"ID", "BR-02", ErrRequired}},
		{"issue date impossible", mut(func(i *Invoice) { i.IssueDate = "2026-02-30" }), false, wantProblem{"IssueDate", "PEPPOL-EN16931-F001", ErrFormat}},
		{"issue date with time", mut(func(i *Invoice) { i.IssueDate = "2026-11-20T10:00:00Z" }), false, wantProblem{"IssueDate", "PEPPOL-EN16931-F001", ErrFormat}},
		{"issue date year 0", mut(func(i *Invoice) { i.IssueDate = "0000-01-01" }), false, wantProblem{"IssueDate", "PEPPOL-EN16931-F001", ErrFormat}},
		{"seller name missing", mut(func(i *Invoice) { i.Seller.Name = "" }), false, wantProblem{"Seller.Name", "BR-06", ErrRequired}},
		{"buyer name blank", mut(func(i *Invoice) { i.Buyer.Name = " \t\n" }), false, wantProblem{"Buyer.Name", "PEPPOL-EN16931-R008", ErrFormat}},
		{"buyer country missing", mut(func(i *Invoice) { i.Buyer.Country = "" }), false, wantProblem{"Buyer.Country", "BR-11", ErrRequired}},
		{"seller country EL", mut(func(i *Invoice) { i.Seller.Country = "EL" }), false, wantProblem{"Seller.Country", "BR-CL-14", ErrCode}},
		{"control character in name", mut(func(i *Invoice) { i.Seller.Name = "Acme\x01 Ltd" }), false, wantProblem{"Seller.Name", "", ErrXMLChar}},
		{"buyer tax registration id", mut(func(i *Invoice) { i.Buyer.TaxRegistrationID = "EU372022452" }), false, wantProblem{"Buyer.TaxRegistrationID", "", ErrForbidden}},
		{"non-Union OSS number as VAT id", mut(func(i *Invoice) { i.Seller.VATNumber = "EU372022452" }), false, wantProblem{"Seller.VATNumber", "BR-CO-09", ErrCode}},
		{"seller without VAT id or tax registration id", mut(func(i *Invoice) { i.Seller.VATNumber = "" }), false, wantProblem{"Seller.VATNumber", "BR-S-02", ErrRequired}},
		{"NUL in note", mut(func(i *Invoice) { i.Note = "paid\x00" }), false, wantProblem{"Note", "", ErrXMLChar}},
		{"U+FFFE in line name", mut(func(i *Invoice) { i.Lines[0].Name = "bad \uFFFE char" }), false, wantProblem{"Lines[0].Name", "", ErrXMLChar}},
		{"invalid UTF-8 in street", mut(func(i *Invoice) { i.Seller.Street = "Stra\xdfe 1" }), false, wantProblem{"Seller.Street", "", ErrXMLChar}},
		{"escape in buyer reference", mut(func(i *Invoice) { i.BuyerReference = "order\x1b[0m" }), false, wantProblem{"BuyerReference", "", ErrXMLChar}},
		{"no lines", mut(func(i *Invoice) { i.Lines = nil }), false, wantProblem{"Lines", "BR-16", ErrRequired}},
		{"net amount 3 decimals", mut(func(i *Invoice) { i.Lines[0] = line("x", "100.005", "S", "19") }), false, wantProblem{"Lines[0].NetAmount", "BR-DEC-23", ErrDecimals}},
		{"net amount negative", mut(func(i *Invoice) { i.Lines[0] = line("x", "-1.00", "S", "19") }), false, wantProblem{"Lines[0].NetAmount", "", ErrRange}},
		{"quantity zero", mut(func(i *Invoice) { i.Lines[0].Quantity = d("0") }), false, wantProblem{"Lines[0].Quantity", "", ErrRange}},
		{"price with a huge exponent", mut(func(i *Invoice) { i.Lines[0].PriceAmount = decimal.New(1, 999999999) }), false, wantProblem{"Lines[0].PriceAmount", "", ErrRange}},
		{"O rate with a huge exponent", mut(func(i *Invoice) { i.Lines[0].Category, i.Lines[0].RatePercent = "O", decimal.New(-1, -999999999) }), false, wantProblem{"Lines[0].RatePercent", "", ErrRange}},
		{"price 7 decimals", mut(func(i *Invoice) { i.Lines[0].PriceAmount = d("100.0000001") }), false, wantProblem{"Lines[0].PriceAmount", "", ErrDecimals}},
		{"net differs from quantity × price", mut(func(i *Invoice) { i.Lines[0].Quantity = d("2") }), false, wantProblem{"Lines[0].NetAmount", "PEPPOL-EN16931-R120", ErrMismatch}},
		{"line name missing", mut(func(i *Invoice) { i.Lines[0].Name = "" }), false, wantProblem{"Lines[0].Name", "BR-25", ErrRequired}},
		{"duplicate line ids", mut(func(i *Invoice) { i.Lines = append(i.Lines, i.Lines[0]); i.Lines[1].ID = "1" }), false, wantProblem{"Lines[1].ID", "", ErrMismatch}},
		{"category E", mut(func(i *Invoice) { i.Lines[0].Category = "E" }), false, wantProblem{"Lines[0].Category", "", ErrUnsupported}},
		{"category unknown", mut(func(i *Invoice) { i.Lines[0].Category = "X" }), false, wantProblem{"Lines[0].Category", "BR-CL-18", ErrCode}},
		{"S at 0 %", mut(func(i *Invoice) { i.Lines[0].RatePercent = d("0") }), false, wantProblem{"Lines[0].RatePercent", "BR-S-05", ErrRange}},
		{"S at 100 %", mut(func(i *Invoice) { i.Lines[0].RatePercent = d("100") }), false, wantProblem{"Lines[0].RatePercent", "", ErrRange}},
		{"Z at 5 %", mut(func(i *Invoice) { i.Lines[0].Category = "Z"; i.Lines[0].RatePercent = d("5") }), false, wantProblem{"Lines[0].RatePercent", "BR-Z-05", ErrRange}},
		{"S with exemption", mut(func(i *Invoice) { i.Lines[0].ExemptionCode = "VATEX-EU-AE" }), false, wantProblem{"Lines[0].ExemptionCode", "BR-S-10", ErrForbidden}},
		{"S without seller VAT", mut(func(i *Invoice) { i.Seller.VATNumber = "" }), false, wantProblem{"Seller.VATNumber", "BR-S-02", ErrRequired}},
		{"non-Union OSS number as seller VAT", mut(func(i *Invoice) { i.Seller.VATNumber = "EU372000041" }), false, wantProblem{"Seller.VATNumber", "BR-CO-09", ErrCode}},
		{"VAT number with space", mut(func(i *Invoice) { i.Seller.VATNumber = "IE 1234567T" }), false, wantProblem{"Seller.VATNumber", "", ErrFormat}},
		{"Dutch VAT number malformed", mut(func(i *Invoice) { i.Buyer.VATNumber = "NL123456789" }), false, wantProblem{"Buyer.VATNumber", "PEPPOL-COMMON-R056-2", ErrFormat}},
		{"endpoint without scheme", mut(func(i *Invoice) { i.Seller.EndpointID = "IE1234567T" }), false, wantProblem{"Seller.EndpointScheme", "BR-62", ErrRequired}},
		{"endpoint scheme unknown", mut(func(i *Invoice) { i.Seller.EndpointID, i.Seller.EndpointScheme = "x", "1234" }), false, wantProblem{"Seller.EndpointScheme", "BR-CL-25", ErrCode}},
		{"legal id scheme not ICD", mut(func(i *Invoice) { i.Seller.LegalIDScheme = "9930" }), false, wantProblem{"Seller.LegalIDScheme", "BR-CL-11", ErrCode}},
		{"GLN check digit", mut(func(i *Invoice) { i.Seller.LegalID, i.Seller.LegalIDScheme = "5391234500005", "0088" }), false, wantProblem{"Seller.LegalID", "PEPPOL-COMMON-R040", ErrFormat}},
		{"contact e-mail", mut(func(i *Invoice) { i.Seller.Contact.Email = "billing at example" }), false, wantProblem{"Seller.Contact.Email", "DE-R-028", ErrFormat}},
		{"contact telephone", mut(func(i *Invoice) { i.Seller.Contact.Telephone = "call us" }), false, wantProblem{"Seller.Contact.Telephone", "DE-R-027", ErrFormat}},
		{"payment means credit transfer", mut(func(i *Invoice) { i.PaymentMeans.Code = "30" }), false, wantProblem{"PaymentMeans.Code", "BR-CL-16", ErrUnsupported}},
		{"payment means code missing", mut(func(i *Invoice) { i.PaymentMeans.Code = "" }), false, wantProblem{"PaymentMeans.Code", "BR-49", ErrRequired}},
		{"line amount too large", mut(func(i *Invoice) {
			i.Lines = []Line{line("a", "1000000000000000.00", "S", "19")}
		}), false, wantProblem{"Lines[0].NetAmount", "", ErrRange}},
		{"total with VAT too large", mut(func(i *Invoice) {
			i.Lines = []Line{line("a", "999999999999999.99", "S", "19")}
		}), false, wantProblem{"Lines", "", ErrRange}},
		{"sum of lines too large", mut(func(i *Invoice) {
			i.Lines = []Line{line("a", "900000000000000.00", "S", "19"), line("b", "99999999999999.99", "S", "19")}
		}), false, wantProblem{"Lines", "", ErrRange}},

		// O (not subject to VAT).
		{"O mixed with S", mut(func(i *Invoice) { i.Lines = append(i.Lines, line("o", "1.00", "O", "0")) }), false, wantProblem{"Lines", "BR-O-11", ErrMismatch}},
		{"O seller without legal id", func() Invoice {
			i := b2c("x", "US", "0", "1.00")
			i.Lines[0].Category = "O"
			i.Seller.LegalID = ""
			return i
		}, false, wantProblem{"Seller.LegalID", "BR-CO-26", ErrRequired}},
		{"O with AE exemption code", func() Invoice {
			i := b2c("x", "US", "0", "1.00")
			i.Lines[0].Category, i.Lines[0].ExemptionCode = "O", "VATEX-EU-AE"
			return i
		}, false, wantProblem{"Lines[0].ExemptionCode", "PEPPOL-EN16931-P0105", ErrCode}},
		{"O over Peppol derives no endpoint", func() Invoice {
			return b2b("x", sellerIE, buyerDEBusiness, line("o", "1.00", "O", "0"))
		}, false, wantProblem{"Seller.EndpointID", "PEPPOL-EN16931-R020", ErrRequired}},

		// AE (reverse charge).
		{"AE without buyer VAT or legal id", func() Invoice {
			i := aeB2B()
			i.Buyer.VATNumber = ""
			i.Buyer.EndpointID, i.Buyer.EndpointScheme = "4000001000005", "0088"
			return i
		}, false, wantProblem{"Buyer.VATNumber", "BR-AE-02", ErrRequired}},
		{"AE with rate", func() Invoice { i := aeB2B(); i.Lines[0].RatePercent = d("19"); return i }, false, wantProblem{"Lines[0].RatePercent", "BR-AE-05", ErrRange}},
		{"AE with O exemption code", func() Invoice { i := aeB2B(); i.Lines[0].ExemptionCode = "VATEX-EU-O"; return i }, false, wantProblem{"Lines[0].ExemptionCode", "PEPPOL-EN16931-P0107", ErrCode}},
		{"AE lines disagree on reason", func() Invoice {
			i := aeB2B()
			i.Lines = append(i.Lines, i.Lines[0])
			i.Lines[0].ExemptionReason, i.Lines[1].ExemptionReason = "Reverse charge", "Autoliquidation"
			return i
		}, false, wantProblem{"Lines[1].ExemptionReason", "", ErrMismatch}},

		// Peppol.
		{"Peppol without buyer reference", func() Invoice { i := aeB2B(); i.BuyerReference = ""; return i }, false, wantProblem{"BuyerReference", "PEPPOL-EN16931-R003", ErrRequired}},
		{"Peppol buyer without derivable endpoint", func() Invoice {
			i := aeB2B()
			i.Buyer = Party{Name: "Kund AB", VATNumber: "SE556123456701", Country: "SE"}
			return i
		}, false, wantProblem{"Buyer.EndpointID", "PEPPOL-EN16931-R010", ErrRequired}},
		{"Peppol e-mail endpoint", func() Invoice {
			i := aeB2B()
			i.Buyer.EndpointID, i.Buyer.EndpointScheme = "ap@kunde.example", "EM"
			return i
		}, false, wantProblem{"Buyer.EndpointScheme", "PEPPOL-EN16931-CL008", ErrCode}},
		{"Peppol Italian buyer with bad P.IVA", func() Invoice {
			i := aeB2B()
			i.Buyer = buyerITBusiness
			i.Buyer.VATNumber = "IT12345678904"
			return i
		}, false, wantProblem{"Buyer.VATNumber", "PEPPOL-COMMON-R047", ErrFormat}},

		// Caller-given subtotals.
		{"subtotal base differs", mut(func(i *Invoice) {
			i.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.01"), TaxAmount: d("19.00")}}
		}), false, wantProblem{"Subtotals[0].TaxableAmount", "BR-S-08", ErrMismatch}},
		{"subtotal VAT off by 0.02", mut(func(i *Invoice) {
			i.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.02")}}
		}), false, wantProblem{"Subtotals[0].TaxAmount", "BR-CO-17", ErrMismatch}},
		{"subtotal VAT 3 decimals", mut(func(i *Invoice) {
			i.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.001")}}
		}), false, wantProblem{"Subtotals[0].TaxAmount", "BR-DEC-20", ErrDecimals}},
		{"subtotal missing for a rate", mut(func(i *Invoice) {
			i.Lines = append(i.Lines, line("e-book", "10.00", "S", "7"))
			i.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.00")}}
		}), false, wantProblem{"Subtotals", "BR-S-01", ErrRequired}},
		{"subtotal without lines", mut(func(i *Invoice) {
			i.Subtotals = []TaxSubtotal{
				{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.00")},
				{Category: "S", RatePercent: d("7"), TaxableAmount: d("0.00"), TaxAmount: d("0.00")},
			}
		}), false, wantProblem{"Subtotals[1]", "BR-S-08", ErrMismatch}},
		{"subtotal twice", mut(func(i *Invoice) {
			s := TaxSubtotal{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.00")}
			i.Subtotals = []TaxSubtotal{s, s}
		}), false, wantProblem{"Subtotals[1]", "BR-CO-18", ErrMismatch}},
		{"AE subtotal with VAT", func() Invoice {
			i := aeB2B()
			i.Subtotals = []TaxSubtotal{{Category: "AE", TaxableAmount: d("100.00"), TaxAmount: d("0.01")}}
			return i
		}, false, wantProblem{"Subtotals[0].TaxAmount", "BR-AE-09", ErrMismatch}},

		// Credit notes.
		{"credit note without invoice reference", mut(func(i *Invoice) {}), true, wantProblem{"InvoiceRef", "BR-55", ErrRequired}},

		// Peppol national rules.
		{"DE-DE without payment means", func() Invoice { i := deB2B(); i.PaymentMeans = nil; return i }, false, wantProblem{"PaymentMeans", "DE-R-001", ErrRequired}},
		{"DE-DE without seller contact", func() Invoice { i := deB2B(); i.Seller.Contact = Contact{}; return i }, false, wantProblem{"Seller.Contact", "DE-R-002", ErrRequired}},
		{"DE-DE without seller telephone", func() Invoice { i := deB2B(); i.Seller.Contact.Telephone = ""; return i }, false, wantProblem{"Seller.Contact.Telephone", "DE-R-006", ErrRequired}},
		{"DE-DE without buyer post code", func() Invoice { i := deB2B(); i.Buyer.PostalCode = ""; return i }, false, wantProblem{"Buyer.PostalCode", "DE-R-009", ErrRequired}},
		{"DE-DE with category O", func() Invoice {
			i := deB2B()
			i.Lines[0].Category = "O"
			i.Seller.EndpointID, i.Seller.EndpointScheme = "4000001000005", "0088"
			i.Buyer.EndpointID, i.Buyer.EndpointScheme = "4000001000005", "0088"
			return i
		}, false, wantProblem{"Lines", "DE-R-014", ErrUnsupported}},
		{"NL-NL with payment means", func() Invoice {
			s := Party{Name: "Voorbeeld BV", VATNumber: "NL123456789B01", LegalID: "12345678", LegalIDScheme: "0106", Street: "Straat 1", City: "Amsterdam", PostalCode: "1011 AA", Country: "NL"}
			b := Party{Name: "Klant BV", VATNumber: "NL987654321B01", Street: "Weg 2", City: "Utrecht", PostalCode: "3511 AA", Country: "NL"}
			return b2b("x", s, b, line("Dienst", "100.00", "S", "21"))
		}, false, wantProblem{"PaymentMeans", "NL-R-008", ErrForbidden}},
		{"NL seller without street", func() Invoice {
			s := Party{Name: "Voorbeeld BV", VATNumber: "NL123456789B01", LegalID: "12345678", LegalIDScheme: "0106", City: "Amsterdam", PostalCode: "1011 AA", Country: "NL"}
			return b2b("x", s, buyerDEBusiness, line("Dienst", "100.00", "AE", "0"))
		}, false, wantProblem{"Seller.Street", "NL-R-002", ErrRequired}},
		{"NL seller legal id not KvK", func() Invoice {
			s := Party{Name: "Voorbeeld BV", VATNumber: "NL123456789B01", LegalID: "12345678", Street: "Straat 1", City: "Amsterdam", PostalCode: "1011 AA", Country: "NL"}
			return b2b("x", s, buyerDEBusiness, line("Dienst", "100.00", "AE", "0"))
		}, false, wantProblem{"Seller.LegalIDScheme", "NL-R-003", ErrCode}},
		{"DK seller without CVR", func() Invoice {
			s := sellerDK
			s.LegalID, s.LegalIDScheme = "", ""
			return b2b("x", s, buyerDEBusiness, line("x", "100.00", "AE", "0"))
		}, false, wantProblem{"Seller.LegalID", "DK-R-002", ErrRequired}},
		{"DK-DK with payment means ZZZ", func() Invoice {
			b := Party{Name: "Kunde A/S", LegalID: "87654321", LegalIDScheme: "0184", VATNumber: "DK87654321", EndpointID: "87654321", EndpointScheme: "0184", Country: "DK"}
			return b2b("x", sellerDK, b, line("x", "100.00", "S", "25"))
		}, false, wantProblem{"PaymentMeans.Code", "DK-R-005", ErrCode}},
		{"Greek seller over Peppol: number not in the myDATA form", func() Invoice {
			return b2b("x", sellerGR, buyerDEBusiness, line("x", "100.00", "AE", "0"))
		}, false, wantProblem{"ID", "GR-R-001-1", ErrFormat}},
		{"Norwegian seller VAT format", func() Invoice {
			s := Party{Name: "Eksempel AS", VATNumber: "NO923609016", LegalID: "923609016", LegalIDScheme: "0192", EndpointID: "923609016", EndpointScheme: "0192", Country: "NO"}
			return b2b("x", s, buyerDEBusiness, line("x", "100.00", "AE", "0"))
		}, false, wantProblem{"Seller.VATNumber", "NO-R-001", ErrFormat}},
		{"Swedish seller at 19 %", func() Invoice {
			b := Party{Name: "Kund AB", VATNumber: "SE556123456701", EndpointID: "5561234567", EndpointScheme: "0007", Country: "SE"}
			return b2b("x", sellerSE, b, line("x", "100.00", "S", "19"))
		}, false, wantProblem{"Lines[0].RatePercent", "SE-R-006", ErrRange}},
		{"Italian seller without post code", func() Invoice {
			s := buyerITBusiness
			s.PostalCode = ""
			s.LegalID = "12345678903"
			return b2b("x", s, buyerDEBusiness, line("x", "100.00", "AE", "0"))
		}, false, wantProblem{"Seller.PostalCode", "IT-R-004", ErrRequired}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := tc.inv()
			var out []byte
			var err error
			if tc.credit {
				out, err = RenderCreditNote(CreditNote{Invoice: inv})
			} else {
				out, err = RenderInvoice(inv)
			}
			if err == nil {
				t.Fatalf("rendered, want %s %s error on %s", tc.want.rule, tc.want.err, tc.want.field)
			}
			if out != nil {
				t.Errorf("returned %d bytes of XML together with an error", len(out))
			}
			if !errors.Is(err, tc.want.err) {
				t.Errorf("errors.Is(err, %v) = false; err = %v", tc.want.err, err)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error is not a *ValidationError: %T %v", err, err)
			}
			for _, p := range ve.Problems {
				if p.Field == tc.want.field && p.Rule == tc.want.rule && errors.Is(p, tc.want.err) {
					return
				}
			}
			t.Errorf("no problem {%s %s %v} in:\n%v", tc.want.field, tc.want.rule, tc.want.err, err)
		})
	}
}

// mut returns a valid B2C invoice changed by f.
func mut(f func(*Invoice)) func() Invoice {
	return func() Invoice {
		i := b2c("x402-test", "DE", "19", "100.00")
		f(&i)
		return i
	}
}

// TestProblemsAllReportedInOrder: one input with several problems reports
// all of them, in a stable order, and the error text names field and rule.
func TestProblemsAllReportedInOrder(t *testing.T) {
	inv := b2c("x", "DE", "19", "100.00")
	inv.Currency = "USDC"
	inv.Seller.Name = ""
	inv.Lines[0].NetAmount = d("100.001")
	_, err := RenderInvoice(inv)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.Field+" "+p.Rule)
	}
	want := []string{"Currency BR-CL-04", "Seller.Name BR-06", "Lines[0].NetAmount BR-DEC-23"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("problems = %q, want %q", got, want)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Currency" {
		t.Errorf("errors.As(*FieldError) = %v", fe)
	}
	msg := err.Error()
	for _, s := range []string{"ubl: 3 problems:", "ubl: Seller.Name: BR-06: required", `"USDC" is not an ISO 4217 fiat currency`} {
		if !strings.Contains(msg, s) {
			t.Errorf("error text lacks %q:\n%s", s, msg)
		}
	}
}

// TestCrossFieldRulesWaitForSoundValues: a malformed amount is reported as
// such, without follow-on arithmetic errors computed from it.
func TestCrossFieldRulesWaitForSoundValues(t *testing.T) {
	inv := b2c("x", "DE", "19", "100.00")
	inv.Lines[0].NetAmount = d("100.001")
	inv.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("100.00"), TaxAmount: d("19.00")}}
	_, err := RenderInvoice(inv)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Rule != "BR-DEC-23" {
		t.Fatalf("want exactly the BR-DEC-23 problem, got %v", err)
	}
}

package returns

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// Art. 63c(1) items that the ledger never holds, named in RecordRow.Missing.
const (
	MissingPaymentsOnAccount = "(i) payments on account received before the supply: the ledger records the settled payment only, which is the chargeable event"
	MissingCustomerName      = "(k) the name of the customer: not given for this supply"
)

// RecordRow is one supply's record for a member state of consumption that
// asks for it (Art. 63c(1) Implementing Regulation (EU) No 282/2011, items
// (a) to (l); text read at
// https://www.legislation.gov.uk/eur/2011/282/article/63c/data.html). An
// item the ledger does not hold is named in Missing, never filled in.
type RecordRow struct {
	ReceiptID   string `json:"receiptId"`
	RecordID    string `json:"recordId"`
	LedgerIndex int64  `json:"ledgerIndex"`
	// (a) the member state of consumption.
	MemberState string `json:"memberStateOfConsumption"`
	// (b) the type of service supplied.
	SupplyType  string `json:"supplyType"` // "services"
	ServiceKind string `json:"serviceKind"`
	Description string `json:"description,omitempty"`
	// (c) the date of the supply (local day in the member state of
	// consumption, BT-72).
	SupplyDate string `json:"supplyDate"`
	// (d) the taxable amount with its currency: the EUR figure of the
	// supply's own invoice (its record's; or that of an invoice issued for
	// it alone, invoicing.IssueAlone), else its record's, and the exact
	// figure it was rounded from.
	TaxableAmount      string `json:"taxableAmount"`
	TaxableAmountExact string `json:"taxableAmountExact,omitempty"`
	TaxableCurrency    string `json:"taxableAmountCurrency"` // "EUR"
	// (e) later reductions of the taxable amount recorded for the supply
	// (its refunds, each with its credit note); empty: none recorded. The
	// ledger records no increase of a supply.
	Adjustments []Adjustment `json:"adjustments"`
	// (f) the VAT rate applied.
	RatePercent string `json:"ratePercent"`
	// (g) the VAT payable with its currency.
	VATAmount      string `json:"vatAmount"`
	VATAmountExact string `json:"vatAmountExact,omitempty"`
	VATCurrency    string `json:"vatCurrency"` // "EUR"
	USDPerEUR      string `json:"usdPerEur"`   // the ECB rate the invoice converted at
	FXRateDate     string `json:"fxRateDate"`
	// (h) the date and amount of the payment received.
	Payments []Payment `json:"payments"`
	// (j) the invoice, where one was issued: its number, date and
	// document (the supply's own, or the summary invoice that covers it
	// once that is issued); the document (UBL) holds the information on
	// the invoice.
	Invoice *InvoiceInfo `json:"invoice,omitempty"`
	// (k) the customer's name, where known.
	CustomerName string `json:"customerName,omitempty"`
	// (l) the information used to determine where the customer is.
	Location Location `json:"customerLocation"`
	// Missing names the items of Art. 63c(1) the ledger does not hold for
	// this supply.
	Missing []string `json:"missing"`
}

// Adjustment is a later change of the taxable amount: its credit note's
// cents and, as the supply's own row states them, the exact figures they
// were rounded from (a refund of part of a micropayment reduces the
// taxable amount and VAT by a fraction of a cent, 0.00 on its credit
// note; the supply's exact figures and its reductions' add up to what the
// OSS return declares, each sum rounded once).
type Adjustment struct {
	Date               string `json:"date"`          // the refund's local day in the taxing state
	TaxableAmount      string `json:"taxableAmount"` // negative for a reduction, at the supply's rate
	TaxableAmountExact string `json:"taxableAmountExact,omitempty"`
	VATAmount          string `json:"vatAmount"`
	VATAmountExact     string `json:"vatAmountExact,omitempty"`
	Currency           string `json:"currency"`     // "EUR"
	RefundedUSDC       string `json:"refundedUsdc"` // the USDC paid back
	ReceiptID          string `json:"receiptId"`
	CreditNote         string `json:"creditNote,omitempty"` // the credit note's number
}

func creditNoteNumber(rf refunds.Refund) string {
	if rf.CreditNote == nil {
		return ""
	}
	return rf.CreditNote.ID
}

// Payment is a payment received for the supply.
type Payment struct {
	At         string `json:"at"` // the date (settlement timestamp, RFC 3339)
	Amount     string `json:"amount"`
	Currency   string `json:"currency"` // "USDC"
	Network    string `json:"network"`
	TxHash     string `json:"txHash"`
	ChainCheck string `json:"chain,omitempty"`
}

// InvoiceInfo identifies the invoice.
type InvoiceInfo struct {
	Number    string `json:"number"`
	IssueDate string `json:"issueDate,omitempty"`
	Format    string `json:"format,omitempty"`
	UBLSHA256 string `json:"ublSha256,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Location is the evidence of the customer's location (Art. 24b, 24f
// Implementing Regulation 282/2011) the record holds.
type Location struct {
	Country    string          `json:"country"`
	PostalCode string          `json:"postalCode,omitempty"`
	Evidence   json.RawMessage `json:"evidence,omitempty"`   // as the merchant attested it
	Assessment json.RawMessage `json:"assessment,omitempty"` // the engine's reading of it
	Address    json.RawMessage `json:"address,omitempty"`
	LegalBasis string          `json:"legalBasis,omitempty"`
}

// RecordsQuery selects the records a member state of consumption asks for.
type RecordsQuery struct {
	Period      Period
	MemberState string // ISO 3166-1 alpha-2; EL is read as GR
}

// Records calls fn with the record of every OSS supply of the account to
// the member state in the period, newest first, one page of the ledger at a
// time.
func Records(ctx context.Context, b *fiscal.Books, q RecordsQuery, fn func(RecordRow) error) error {
	if err := q.Period.check(); err != nil {
		return err
	}
	ms := isoCountry(q.MemberState)
	if !isEU(ms) {
		return badRequest("memberState", "is %s; want the ISO code of an EU member state (EL is read as GR)", shown.Quote(q.MemberState))
	}
	p, seller := q.Period, b.Account().Seller
	sums := summaries{b: b, docs: map[string]summaryFacts{}}
	lq := listing.Query{From: p.Start().Add(-localMargin), SettledFrom: p.Start().Add(-localMargin), SettledTo: p.End().Add(localMargin), TaxingCountry: ms,
		ReviewStatus: fiscal.StatusProcessed}
	return each(ctx, b, lq, func(raw []byte) error {
		rc, err := decodeRec(raw)
		if err != nil {
			return err
		}
		date, _ := rc.supplyDate()
		if !p.Contains(date) || rc.Classification.Regime != vat.RegimeOSSB2C {
			return nil // not an OSS supply (oss.go)
		}
		// Declared as the record states it was when made, else as the
		// profile says (declared.go).
		if d := rc.declared(); d.known && d.national || !d.known && declaredNationally(seller, rc.Classification.Scheme, rc.Classification.TaxingCountry, date) {
			return nil
		}
		row := recordRow(rc, date)
		if err := coveredRow(&sums, rc, &row); err != nil {
			return err
		}
		refunds, err := refunds.List(ctx, b, rc.ID)
		if err != nil {
			return err
		}
		for _, rf := range refunds {
			row.Adjustments = append(row.Adjustments, Adjustment{Date: rf.RefundDate, TaxableAmount: rf.FX.NetEUR, VATAmount: rf.FX.VATEUR,
				TaxableAmountExact: rf.FX.NetEURExact, VATAmountExact: rf.FX.VATEURExact,
				Currency: "EUR", RefundedUSDC: rf.AmountUSDC, ReceiptID: rf.Receipt.ID, CreditNote: creditNoteNumber(rf)})
		}
		return fn(row)
	})
}

// coveredRow names in row the summary invoice that covers rc once it is
// issued (Art. 63c(1)(j): the invoice issued for the supply), instead of
// counting the invoice among what is missing; an invoice of that supply
// alone (invoicing.IssueAlone) also gives the taxable amount and VAT it
// states (its taxable amount times the rate, EN 16931 BR-CO-17).
func coveredRow(s *summaries, rc *rec, row *RecordRow) error {
	doc, ok, err := s.of(rc)
	if err != nil || !ok {
		return err
	}
	inv := doc.Invoice
	row.Invoice = &InvoiceInfo{Number: inv.ID, IssueDate: inv.IssueDate, Format: inv.Format, UBLSHA256: inv.UBLSHA256, URL: inv.URL}
	row.Missing = slices.DeleteFunc(row.Missing, func(m string) bool { return strings.HasPrefix(m, missingInvoice) })
	if doc.InvoicedAlone != "" {
		row.TaxableAmount, row.VATAmount = doc.NetEUR, doc.VATEUR
	}
	return nil
}

// missingInvoice begins the item of RecordRow.Missing about the invoice.
const missingInvoice = "(j) invoice: "

func recordRow(rc *rec, date string) RecordRow {
	c := rc.Classification
	row := RecordRow{ReceiptID: rc.Receipt.ID, RecordID: rc.ID, LedgerIndex: rc.Ledger.Index, MemberState: c.TaxingCountry,
		SupplyType: SupplyServices, ServiceKind: rc.Supply.Kind, Description: rc.Supply.Description, SupplyDate: date,
		TaxableAmount: rc.FX.NetEUR, TaxableAmountExact: rc.FX.NetEURExact, TaxableCurrency: "EUR", Adjustments: []Adjustment{},
		RatePercent: c.RatePercent.String(), VATAmount: rc.FX.VATEUR, VATAmountExact: rc.FX.VATEURExact, VATCurrency: "EUR",
		Payments:     []Payment{{At: rc.Settlement.Timestamp, Amount: rc.Settlement.AmountUSDC, Currency: "USDC", Network: rc.Settlement.Network, TxHash: rc.Settlement.TxHash}},
		CustomerName: rc.Buyer.Name,
		Location: Location{Country: rc.Buyer.Country, PostalCode: rc.Buyer.PostalCode, Evidence: rc.Buyer.Evidence, Assessment: rc.Classification.LocationEvidence,
			Address: rc.Buyer.Address, LegalBasis: c.LegalBasis},
		Missing: []string{MissingPaymentsOnAccount}}
	var rate struct{ Raw, RateDate string }
	if len(rc.FX.USDPerEUR) > 0 {
		_ = json.Unmarshal(rc.FX.USDPerEUR, &rate)
	}
	row.USDPerEUR, row.FXRateDate = rate.Raw, rate.RateDate
	if rc.Invoice != nil {
		row.Invoice = &InvoiceInfo{Number: rc.Invoice.ID, IssueDate: rc.Invoice.IssueDate, Format: rc.Invoice.Format, UBLSHA256: rc.Invoice.UBLSHA256, URL: rc.Invoice.URL}
	} else if inv := rc.Invoicing; inv != nil && inv.Invoice == "summary" {
		row.Missing = append(row.Missing, missingInvoice+"the supply is on the summary invoice of its buyer for "+inv.Period+
			" (GET /settlements/{id}/invoiced-by names it), not an invoice of its own")
	} else if inv != nil && inv.Invoice == "none" {
		row.Missing = append(row.Missing, missingInvoice+"none was issued; "+inv.Basis)
	} else {
		row.Missing = append(row.Missing, missingInvoice+"none was issued for this supply")
	}
	if row.CustomerName == "" {
		row.Missing = append(row.Missing, MissingCustomerName)
	}
	if len(row.Location.Evidence) == 0 && len(row.Location.Assessment) == 0 {
		row.Missing = append(row.Missing, "(l) items of location evidence: the merchant attested the country only")
	}
	return row
}

// RecordsCSVHeader is the header of WriteRecordsCSV.
var RecordsCSVHeader = []string{"receiptId", "recordId", "ledgerIndex", "memberStateOfConsumption", "supplyType", "serviceKind", "description",
	"supplyDate", "taxableAmount", "taxableAmountExact", "taxableAmountCurrency", "adjustments", "ratePercent", "vatAmount", "vatAmountExact",
	"vatCurrency", "usdPerEur", "fxRateDate", "paymentDate", "paymentAmount", "paymentCurrency", "network", "txHash", "invoiceNumber",
	"invoiceIssueDate", "invoiceUblSha256", "customerName", "customerCountry", "customerPostalCode", "locationEvidence", "missing"}

// RecordsCSV writes rows as CSV one at a time.
type RecordsCSV struct{ w *csv.Writer }

// NewRecordsCSV writes the header and returns the writer.
func NewRecordsCSV(w io.Writer) (*RecordsCSV, error) {
	cw := csv.NewWriter(w)
	return &RecordsCSV{cw}, cw.Write(RecordsCSVHeader)
}

// Write writes one row.
func (c *RecordsCSV) Write(r RecordRow) error {
	pay := r.Payments[0]
	inv := InvoiceInfo{}
	if r.Invoice != nil {
		inv = *r.Invoice
	}
	adj := ""
	if len(r.Adjustments) > 0 {
		b, _ := json.Marshal(r.Adjustments)
		adj = string(b)
	}
	return c.w.Write([]string{r.ReceiptID, r.RecordID, strconv.FormatInt(r.LedgerIndex, 10), r.MemberState, r.SupplyType, r.ServiceKind, r.Description,
		r.SupplyDate, r.TaxableAmount, r.TaxableAmountExact, r.TaxableCurrency, adj, r.RatePercent, r.VATAmount, r.VATAmountExact,
		r.VATCurrency, r.USDPerEUR, r.FXRateDate, pay.At, pay.Amount, pay.Currency, pay.Network, pay.TxHash, inv.Number,
		inv.IssueDate, inv.UBLSHA256, r.CustomerName, r.Location.Country, r.Location.PostalCode, string(r.Location.Evidence), strings.Join(r.Missing, "; ")})
}

// Flush flushes the writer and returns its error.
func (c *RecordsCSV) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

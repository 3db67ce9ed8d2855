package returns

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/refunds"
)

// Export formats.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// ExportLine is one record in an export: the fields an accountant imports.
// Amounts are empty while the record is pending review and has none. The
// cent figures are those of the supply's own document: its invoice issued
// with the record (the record's and its receipt's figures: the exact VAT
// rounded once, net = gross − VAT), an invoice issued later for it alone
// (invoicing.IssueAlone: its taxable amount the exact net rounded once,
// its VAT that amount times the rate, rounded, EN 16931 BR-CO-17, a cent
// from the record's for some micro amounts), or a refund's credit note. A
// supply a summary invoice covers, or none, has no document of its own:
// its line states the record's cents, what an invoice of that supply
// issued with the record would state; the summary states per VAT rate its
// supplies' exact net summed and rounded once, and its VAT by BR-CO-17.
// The exact figures (fx.ExactScale decimals, net + VAT = gross exactly) are
// the record's: what a total adds and rounds once, as the OSS return
// does: a micropayment's VAT is 0.00 to the cent and kept only there (a
// line's exact figures, summed per member state and rate and rounded once,
// are the return line's invoice figures). Empty on a record from before
// exact figures were kept.
type ExportLine struct {
	ID            string `json:"id"`
	Type          string `json:"type"`        // "settlement", or "refund" (amounts negative, the credit note's number)
	CreatedAt     string `json:"createdAt"`   // when the service recorded it
	SettledAt     string `json:"settledAt"`   // the settlement timestamp (chargeable event)
	SupplyDate    string `json:"supplyDate"`  // local day in the taxing state (BT-72); a refund's: its refund date
	Country       string `json:"country"`     // the taxing country
	Category      string `json:"category"`    // UNCL5305 tax category (S, Z, AE, O)
	Regime        string `json:"regime"`      // OSS_B2C, DOMESTIC, REVERSE_CHARGE_B2B, ...
	RatePercent   string `json:"ratePercent"` // VAT rate
	NetEUR        string `json:"netEur"`
	VATEUR        string `json:"vatEur"`
	GrossEUR      string `json:"grossEur"`
	AmountUSDC    string `json:"amountUsdc"`
	Network       string `json:"network"`
	TxHash        string `json:"txHash"` // a refund's: its transfer's, "" when it names none
	InvoiceNumber string `json:"invoiceNumber"`
	ReceiptID     string `json:"receiptId"`
	ReviewStatus  string `json:"reviewStatus"`
	LedgerIndex   int64  `json:"ledgerIndex"`
	NetEURExact   string `json:"netEurExact"`
	VATEURExact   string `json:"vatEurExact"`
	GrossEURExact string `json:"grossEurExact"`
	// InvoiceCoverage says which invoice InvoiceNumber is, as GET
	// /settlements/{id}/invoiced-by does (invoicing.Coverage.Invoice):
	// per_payment (the supply's own invoice, also one issued for it
	// alone, invoicing.IssueAlone), summary (the summary invoice of its
	// buyer and month that covers it, Art. 223 Directive 2006/112/EC: its
	// number), summary_pending (that summary is not issued yet: no number
	// until it is), none (no invoice is required) or not_invoiced (pending
	// review). A refund's line says credit_note (its credit note's number)
	// or none (no invoice to amend, none being required).
	InvoiceCoverage string `json:"invoiceCoverage"`
}

// ExportCSVHeader is the header of a CSV export.
var ExportCSVHeader = []string{"id", "type", "createdAt", "settledAt", "supplyDate", "country", "category", "regime", "ratePercent",
	"netEur", "vatEur", "grossEur", "amountUsdc", "network", "txHash", "invoiceNumber", "receiptId", "reviewStatus", "ledgerIndex",
	"netEurExact", "vatEurExact", "grossEurExact", "invoiceCoverage"}

func (l ExportLine) row() []string {
	return []string{l.ID, l.Type, l.CreatedAt, l.SettledAt, l.SupplyDate, l.Country, l.Category, l.Regime, l.RatePercent,
		l.NetEUR, l.VATEUR, l.GrossEUR, l.AmountUSDC, l.Network, l.TxHash, l.InvoiceNumber, l.ReceiptID, l.ReviewStatus,
		strconv.FormatInt(l.LedgerIndex, 10), l.NetEURExact, l.VATEURExact, l.GrossEURExact, l.InvoiceCoverage}
}

// ExportQuery selects the records to export: those the service recorded
// (createdAt) in [From, To], both inclusive; zero means unbounded.
type ExportQuery struct {
	From, To time.Time
	Format   string // FormatCSV or FormatJSONL
}

// CheckFormat is nil for a format Export writes.
func CheckFormat(format string) error {
	if format != FormatCSV && format != FormatJSONL {
		return badRequest("format", "is %s; want %s or %s", shown.Quote(format), FormatCSV, FormatJSONL)
	}
	return nil
}

// Export writes every settlement record of the account selected by q to w,
// one line per record, newest first (the order of GET /settlements), then
// every refund recorded in the range, by refund date (a line of type
// "refund": negative amounts at the original rates, the credit note's
// number as invoice number, the refund's receipt). A supply a summary
// invoice covers is given that summary's number once it is issued
// (ExportLine.InvoiceCoverage says which invoice a number is, or that the
// summary is still to come). It streams: one page of the ledger is held at
// a time, and w is flushed after each page. A bad query is a *fiscal.Error
// before anything is written.
func Export(ctx context.Context, b *fiscal.Books, q ExportQuery, w io.Writer) error {
	if err := CheckFormat(q.Format); err != nil {
		return err
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return badRequest("to", "is before from")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var cw *csv.Writer
	enc := json.NewEncoder(bw)
	if q.Format == FormatCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(ExportCSVHeader); err != nil {
			return err
		}
	}
	n := 0
	sums := summaries{b: b, docs: map[string]summaryFacts{}}
	err := each(ctx, b, listing.Query{From: q.From, To: q.To}, func(raw []byte) error {
		rc, err := decodeRec(raw)
		if err != nil {
			return err
		}
		l := exportLine(rc)
		if err := sums.cover(rc, &l); err != nil {
			return err
		}
		if cw != nil {
			err = cw.Write(l.row())
		} else {
			err = enc.Encode(l)
		}
		if err != nil {
			return err
		}
		if n++; n%pageSize == 0 {
			if cw != nil {
				cw.Flush()
			}
			return bw.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The refunds recorded in the range, whatever day their transfer's
	// block dates them by (it may be long before they were recorded).
	err = refunds.ByRecording(ctx, b, q.From, q.To, func(rf *refunds.Refund, _ []byte) error {
		at, err := time.Parse(time.RFC3339Nano, rf.CreatedAt)
		if err != nil || (!q.From.IsZero() && at.Before(q.From)) || (!q.To.IsZero() && at.After(q.To)) {
			return nil
		}
		l := refundLine(rf)
		if cw != nil {
			err = cw.Write(l.row())
		} else {
			err = enc.Encode(l)
		}
		if err != nil {
			return err
		}
		if n++; n%pageSize == 0 {
			if cw != nil {
				cw.Flush()
			}
			return bw.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func refundLine(rf *refunds.Refund) ExportLine {
	c := rf.Classification
	l := ExportLine{ID: rf.ID, Type: "refund", CreatedAt: rf.CreatedAt, SettledAt: rf.Payment.Timestamp, SupplyDate: rf.RefundDate,
		Country: c.TaxingCountry, Category: c.Category, Regime: c.Regime, NetEUR: rf.FX.NetEUR, VATEUR: rf.FX.VATEUR, GrossEUR: rf.FX.GrossEUR,
		NetEURExact: rf.FX.NetEURExact, VATEURExact: rf.FX.VATEURExact, GrossEURExact: rf.FX.GrossEURExact,
		AmountUSDC: "-" + rf.AmountUSDC, Network: rf.Payment.Network, TxHash: rf.Payment.TxHash, ReceiptID: rf.Receipt.ID,
		ReviewStatus: fiscal.StatusProcessed, LedgerIndex: rf.Ledger.Index}
	if c.RatePercent != nil {
		l.RatePercent = c.RatePercent.String()
	}
	l.InvoiceCoverage = invoicing.CoveredNone
	if rf.CreditNote != nil {
		l.InvoiceNumber, l.InvoiceCoverage = rf.CreditNote.ID, coveredByCreditNote
	}
	if rf.Transaction == nil {
		// No refund transfer was named: a refund document recorded before
		// RefundPayment left out the txHash states the sale's own there,
		// which is not the refund's.
		l.TxHash = ""
	}
	return l
}

func exportLine(rc *rec) ExportLine {
	c := rc.Classification
	date, _ := rc.supplyDate()
	if c.SupplyDate == "" {
		date = "" // not stated by the record: the export does not derive one
	}
	l := ExportLine{ID: rc.ID, Type: "settlement", CreatedAt: rc.CreatedAt, SettledAt: rc.Settlement.Timestamp, SupplyDate: date, Country: c.TaxingCountry,
		Category: c.Category, Regime: c.Regime, RatePercent: c.RatePercent.String(), NetEUR: rc.FX.NetEUR, VATEUR: rc.FX.VATEUR,
		GrossEUR: rc.FX.GrossEUR, NetEURExact: rc.FX.NetEURExact, VATEURExact: rc.FX.VATEURExact, GrossEURExact: rc.FX.GrossEURExact,
		AmountUSDC: rc.Settlement.AmountUSDC, Network: rc.Settlement.Network, TxHash: rc.Settlement.TxHash,
		ReceiptID: rc.Receipt.ID, ReviewStatus: rc.ReviewStatus, LedgerIndex: rc.Ledger.Index}
	l.InvoiceCoverage = invoicing.CoveredUnknown
	switch inv := rc.Invoicing; {
	case rc.Invoice != nil:
		l.InvoiceNumber, l.InvoiceCoverage = rc.Invoice.ID, invoicing.CoveredPerPayment
	case rc.ReviewStatus == fiscal.StatusProcessed && inv != nil && inv.Invoice == invoicing.CoveredNone:
		l.InvoiceCoverage = invoicing.CoveredNone
	case rc.ReviewStatus == fiscal.StatusProcessed && inv != nil && inv.Invoice == invoicing.CoveredBySummary:
		l.InvoiceCoverage = invoicing.CoveredLater // until summaries.cover finds it issued
	}
	return l
}

// coveredByCreditNote is a refund line's InvoiceCoverage when its number
// is its credit note's.
const coveredByCreditNote = "credit_note"

// summaries reads, for one export, the summary invoices that cover its
// supplies, keeping what a line needs of the latest summaryCache of them
// (a month's supplies are near one another in the export's order), so
// that memory stays bounded however many summaries the range holds.
type summaries struct {
	b    *fiscal.Books
	docs map[string]summaryFacts
}

// summaryCache bounds summaries.docs.
const summaryCache = 1024

// summaryFacts is what an export line takes of a summary invoice's
// document (invoicing.SummaryInvoice).
type summaryFacts struct {
	Account       string            `json:"account"`
	Object        string            `json:"object"`
	Invoice       fiscal.InvoiceRef `json:"invoice"`
	InvoicedAlone string            `json:"invoicedAlone"`
	NetEUR        string            `json:"netEur"`   // BT-109
	VATEUR        string            `json:"vatEur"`   // BT-110
	GrossEUR      string            `json:"grossEur"` // BT-112
}

// cover names in l the summary invoice that covers rc, a supply awaiting
// one (InvoiceCoverage summary_pending), once it is issued: its number,
// and per_payment for an invoice of that supply alone (IssueAlone), as
// invoicing.Covering says. An invoice of that supply alone is its
// document: l states its cent figures, which round the VAT as a summary
// does (its taxable amount times the rate, EN 16931 BR-CO-17) and may be
// a cent from the record's (its exact VAT rounded); the exact figures
// stay the record's.
func (s *summaries) cover(rc *rec, l *ExportLine) error {
	if l.InvoiceCoverage != invoicing.CoveredLater {
		return nil
	}
	doc, ok, err := s.of(rc)
	if err != nil || !ok {
		return err
	}
	l.InvoiceNumber, l.InvoiceCoverage = doc.Invoice.ID, invoicing.CoveredBySummary
	if doc.InvoicedAlone != "" {
		l.InvoiceCoverage = invoicing.CoveredPerPayment
		l.NetEUR, l.VATEUR, l.GrossEUR = doc.NetEUR, doc.VATEUR, doc.GrossEUR
	}
	return nil
}

// of is the summary invoice that covers rc, a processed supply its
// record says a summary covers; false while none is issued.
func (s *summaries) of(rc *rec) (summaryFacts, bool, error) {
	if rc.Invoice != nil || rc.ReviewStatus != fiscal.StatusProcessed || rc.Invoicing == nil || rc.Invoicing.Invoice != invoicing.CoveredBySummary {
		return summaryFacts{}, false, nil
	}
	id, err := invoicing.SummaryCovering(s.b, &fiscal.Record{ID: rc.ID})
	if err != nil || id == "" {
		return summaryFacts{}, false, err
	}
	doc, ok := s.docs[id]
	if !ok {
		raw, err := s.b.Engine().Document(id)
		if err != nil {
			return summaryFacts{}, false, err
		}
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Object != invoicing.ObjectSummaryInvoice || doc.Account != s.b.Account().ID {
			return summaryFacts{}, false, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the summary invoice " + id + " that covers settlement " + rc.ID + " is unreadable", Err: err}
		}
		if len(s.docs) >= summaryCache {
			clear(s.docs)
		}
		s.docs[id] = doc
	}
	return doc, true, nil
}

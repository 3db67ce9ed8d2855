package fiscal

import (
	"cmp"
	"errors"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ubl"
)

// CodeCreditNoteRefused: the credit note would break a rule of EN 16931,
// Peppol or the invoicing law (the account's profile changed since the
// invoice); the detail names the rules (Code.HTTPStatus: 422).
const CodeCreditNoteRefused Code = "CREDIT_NOTE_REFUSED"

// CreditNote is what a correcting entry's credit note (UBL 2.1 CreditNote,
// type code 381) states beside the invoice it corrects: the invoice of the
// stored record, under the same invoicing law and parties, at the record's
// own VAT rate and category, with these amounts and this note
// (Books.CreditNoteDraft). Package refunds makes one per refund.
type CreditNote struct {
	// Net and VAT are the corrected amounts as the credit note states
	// them: to the cent and positive (the document type gives the sign).
	Net, VAT decimal.Decimal
	// Note is the credit note's own note; the VAT mention the supply
	// required (reverse charge, Art. 226(11a) Directive 2006/112/EC) is
	// appended to it.
	Note string
	// PaidBy is the hash of the transfer that paid the correction back:
	// the credit note says paid, with the transfer as the means' id. "":
	// the amount is owed to the buyer (payable).
	PaidBy string
	// URL is where the credit note is served (InvoiceRef.URL).
	URL string
	// Law is the invoicing law the corrected invoice followed (its state,
	// basis and the seller's VAT number on it), which the credit note
	// follows too; zero: decided again from the account's profile.
	Law invoicelaw.Law
	// Corrects is the invoice the credit note corrects (BT-25, BT-26) when
	// it is not orig's own: the summary invoice that covers orig (Art. 223
	// Directive 2006/112/EC; package refunds finds it). nil: orig.Invoice.
	Corrects *InvoiceRef
	// Buyer is the buyer (BG-7) the corrected invoice names when it is not
	// orig's own: a summary invoice names its latest supply's. nil: orig's.
	Buyer *ubl.Party
}

// CreditNoteDraft makes the draft of an entry that corrects orig, a stored
// record with an invoice, by a credit note: rec is the entry's record as
// its receipt states it (rec.ID the entry id; rec.FX.National, when set,
// the correction in the invoicing state's currency at orig's national
// rate), issued the time it is recorded. The credit note is numbered in
// the committer from the account's credit-note series, a series of its
// own beside the invoices' (Art. 226(2) allows one or more): the invoice
// prefix, "CN-", the year of issue, six digits (F402-CN-2026-000001). The
// receipt supersedes orig's. The caller adds the event type, claims,
// postings, document and commit checks, and commits the draft
// (Engine.Commit). A credit note that would break a rule of EN 16931,
// Peppol or the invoicing law (the account's profile changed since the
// invoice) is CREDIT_NOTE_REFUSED.
//
// A record whose supply has no invoice, none being required
// (RecordInvoicing.Uninvoiced), is corrected without a credit note (cn is
// not used): there is no invoice to amend (Art. 219 Directive
// 2006/112/EC), while the correction still reduces the taxable amount
// (Art. 90) and the OSS return reports it (package returns). orig must
// otherwise have an invoice of its own, or cn.Corrects names the issued
// summary invoice that covers it.
func (b *Books) CreditNoteDraft(orig *Record, rec Record, cn CreditNote, issued time.Time) (*Draft, error) {
	if cn.Corrects = cmp.Or(cn.Corrects, orig.Invoice); cn.Corrects == nil && orig.Invoicing.Uninvoiced() {
		claims := receiptClaims(&rec, issued)
		claims.Supersedes = orig.Receipt.ID
		return &Draft{Record: rec, id: rec.ID, createdAt: issued, claims: &claims}, nil
	}
	seller := b.e.documentSeller(b.acc.Seller)
	var tc *ubl.TaxCurrency
	if nat := rec.FX.National; nat != nil && nat.Rate != nil {
		tc = invoicelaw.WithExact(&ubl.TaxCurrency{Code: nat.Currency, Rate: nat.Rate.Value, RateDate: nat.Rate.RateDate, RateSource: invoicelaw.RateSource(*nat.Rate, nat.Rule), Stated: invoicelaw.StatedNational(nat.Net, nat.VAT)}, cn.Net, cn.VAT, rec.FX.NetEURExact, rec.FX.VATEURExact)
	}
	doc, err := creditNoteFor(orig, seller, amounts{net: cn.Net, vat: cn.VAT}, tc, issued, cn)
	if err != nil {
		return nil, err
	}
	draft, err := b.e.invoices.DraftCreditNote(doc) // the engine's Renderer, as invoices
	var ve *ubl.ValidationError
	if errors.As(err, &ve) {
		return nil, &Error{Code: CodeCreditNoteRefused, Detail: "the credit note would break these rules (check the account's seller profile): " + ve.Error(), Err: err}
	}
	if err != nil {
		return nil, &Error{Code: CodeInternal, Detail: "the credit note could not be rendered", Err: err}
	}
	series, prefix := documentSeries("credit-note", invoicelaw.CreditNoteMark, b.acc.ID, seller, doc.IssueDate)
	rec.Invoice = &InvoiceRef{
		Format: "UBL 2.1 CreditNote", Profile: string(doc.Profile), URL: cn.URL,
		TaxCountry: cn.Corrects.TaxCountry, TaxBasis: cn.Corrects.TaxBasis, IssueDate: doc.IssueDate,
	}
	claims := receiptClaims(&rec, issued)
	claims.Supersedes = orig.Receipt.ID
	return &Draft{Record: rec, id: rec.ID, createdAt: issued, ublDraft: draft, series: series, seriesPrefix: prefix, claims: &claims}, nil
}

// creditNoteFor builds the credit note that corrects orig's invoice: the
// invoice the record got, under the same invoicing law and parties, with
// the corrected amounts, the original VAT rate and category, the original
// tax-currency rate, its own note, and BillingReference to the invoice
// corrected (cn.Corrects: BT-25, BT-26).
func creditNoteFor(orig *Record, s Seller, a amounts, tc *ubl.TaxCurrency, issued time.Time, cn CreditNote) (ubl.CreditNote, error) {
	ls := s.ForInvoiceLaw()
	law := cn.Law.Or(orig.Classification, ls)
	seller := invoicelaw.SellerParty(ls, law)
	buyer, _ := invoicelaw.BuyerParty(orig.Classification, orig.Buyer.ForInvoiceLaw())
	if cn.Buyer != nil {
		buyer = *cn.Buyer
	}
	inv, err := invoiceFor(orig, law, &seller, &buyer, &a, tc, issued)
	if err != nil {
		return ubl.CreditNote{}, &Error{Code: CodeInternal, Detail: "the credit note could not be built", Err: err}
	}
	text := cn.Note
	if det := orig.Classification; det.InvoiceNote != "" {
		text += " " + det.InvoiceNote // the VAT mention the supply required (reverse charge, Art. 226(11a))
	}
	if tc != nil && !strings.HasSuffix(text, ".") {
		text += "." // ubl appends the VAT in the tax currency as a sentence of its own
	}
	inv.ID, inv.Note = "", text // numbered in the committer
	// Paid back when a transfer says so; otherwise the amount is owed to
	// the buyer (payable). The means is a USDC transfer back; its id is
	// the transfer's hash when known (a national rule may require the
	// means, DE-R-001).
	inv.PaidInFull = cn.PaidBy != ""
	inv.PaymentMeans = ubl.StablecoinPaymentMeans(seller.Country, buyer.Country, cn.PaidBy)
	return ubl.CreditNote{Invoice: inv, InvoiceRef: cn.Corrects.ID, InvoiceIssueDate: cn.Corrects.IssueDate}, nil
}

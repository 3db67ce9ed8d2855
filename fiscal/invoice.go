package fiscal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// networkNames are the human names of the supported networks, for the
// invoice note.
var networkNames = map[string]string{
	evmverify.NetworkBase:     "Base",
	evmverify.NetworkEthereum: "Ethereum",
}

// renderInvoice decides the invoicing law of a processed draft
// (invoicelaw.For), builds its UBL invoice and renders it into the draft.
// Whatever stops a compliant invoice sends the draft to review instead
// (toReview), with reasons that say what is missing: the customer's name
// or address, a national rate, the rules the invoice would break. A
// settled payment always gets its record, never a 500 and never a
// non-compliant invoice (what it cannot settle waits as
// PENDING_MANUAL_REVIEW). Only an internal failure is an error.
func (e *Engine) renderInvoice(d *Draft, s Seller) (ubl.Profile, string, invoicelaw.Law, error) {
	r := &d.Record
	a := d.amounts // Prepare's split of the gross under the classification
	ls, lb := s.ForInvoiceLaw(), r.Buyer.ForInvoiceLaw()
	law := invoicelaw.For(r.Classification, ls)
	seller := invoicelaw.SellerParty(ls, law)
	buyer, missing := invoicelaw.BuyerParty(r.Classification, lb)
	var reasons []vat.Reason
	var explained []string // rules a reason already explains
	if len(missing) > 0 {
		reasons = append(reasons, invoicelaw.AddressReason(lb, missing))
		explained = append(explained, ubl.RuleArt226_5, "BR-07") // BR-07: the buyer's name
	}
	var tc *ubl.TaxCurrency
	if law.TaxCountry != "" {
		// Issue has no context of its own; the engine's rate sources are
		// in-memory tables (fx.Table, fx.LiveTable).
		national, c, reason, err := e.nationalVAT(context.Background(), r, ls, law, a)
		if err != nil {
			return "", "", law, err
		}
		if reason != nil {
			reasons = append(reasons, *reason)
			explained = append(explained, ubl.RuleArt230)
		}
		r.FX.National, tc = national, c
	}
	inv, err := invoiceFor(r, law, &seller, &buyer, &a, tc, d.createdAt)
	if err == nil {
		if len(reasons) == 0 {
			inv.ID = "" // numbered in the committer (numbering.go)
			d.ublDraft, err = e.invoices.DraftInvoice(inv)
		} else {
			_, err = inv.Totals() // every other rule the invoice would break
		}
	}
	var ve *ubl.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return inv.Profile, inv.IssueDate, law, &Error{Code: CodeInternal, Detail: "the invoice could not be rendered", Err: err}
	}
	if ve != nil {
		if reason := invoicelaw.RulesReason(ve, law, explained...); reason != nil {
			reasons = append(reasons, *reason)
		}
	}
	if len(reasons) > 0 {
		d.ubl, d.ublDraft = nil, nil
		toReview(d, reasons)
		return inv.Profile, inv.IssueDate, law, nil
	}
	if n := r.FX.National; n != nil {
		// What the invoice states (ubl converts the exact net and VAT at
		// the rate, each rounded once: National.TaxCurrency): BT-111 is the VAT.
		n.Net, n.VAT = a.netExact.Mul(n.Rate.Value).Round(2).StringFixed(2), a.vatExact.Mul(n.Rate.Value).Round(2).StringFixed(2)
	}
	return inv.Profile, inv.IssueDate, law, nil
}

// nationalVAT states the supply's VAT in the national currency of the
// invoicing state when it is not the euro (invoicelaw.NationalVAT, Art.
// 230 Directive 2006/112/EC), at the instant of the settlement and under
// the Art. 91(2) reading the record's EUR conversion used, on its day
// (the supply date under the rate of the day): the figures
// for the record, the rate for the invoice, or the review reason of a
// rate that cannot be had.
func (e *Engine) nationalVAT(ctx context.Context, r *Record, s invoicelaw.Seller, law invoicelaw.Law, a amounts) (*RecordNationalFX, *ubl.TaxCurrency, *vat.Reason, error) {
	at, err := time.Parse(time.RFC3339Nano, r.Settlement.Timestamp)
	if err != nil {
		return nil, nil, nil, &Error{Code: CodeInternal, Detail: "the record's settlement time cannot be read", Err: err}
	}
	// The Art. 91(2) reading the record's EUR conversion used.
	n, reason, err := invoicelaw.NationalVAT(ctx, e.cfg.FX, r.FX.USDPerEUR.PolicyUsed(), s, law, at, r.Classification.SupplyDate, a.vatExact, a.netExact)
	if err != nil {
		return nil, nil, nil, &Error{Code: CodeInternal, Detail: "national-currency rate lookup failed", Err: err}
	}
	if reason != nil || n == nil {
		return nil, nil, reason, nil
	}
	rate := n.VAT.Rate
	rec := &RecordNationalFX{
		Country: n.VAT.Country, Currency: n.VAT.Currency, Basis: n.Basis, Rate: &rate, Rule: n.VAT.Rule,
		NetExact: n.Net.AmountExact, VATExact: n.VAT.AmountExact, Rounding: n.VAT.Rounding,
	}
	return rec, n.TaxCurrency(), nil, nil
}

// describeLaw adds to the record's invoice reference the law it follows
// and, for a reverse charge, its Art. 222 deadline.
func describeLaw(r *Record, law invoicelaw.Law, issueDate string) {
	ref := r.Invoice
	ref.TaxCountry, ref.TaxBasis, ref.IssueDate = law.TaxCountry, law.Basis, issueDate
	if r.Classification.Regime == vat.RegimeReverseChargeB2B {
		if dl := invoicelaw.ReverseChargeDeadline(r.Classification.SupplyDate); dl != "" {
			ref.IssueDeadline, ref.IssuedLate = dl, issueDate > dl
		}
	}
}

// toReview turns a draft that was to be PROCESSED into one pending review
// with reasons, without an invoice; a settlement's event says so.
func toReview(d *Draft, reasons []vat.Reason) {
	r := &d.Record
	r.ReviewStatus = StatusPendingReview
	r.ReviewReasons = append(slices.Clip(r.ReviewReasons), reasons...)
	r.Invoice, r.Invoicing = nil, nil
	switch d.EventType {
	case EventSettlementProcessed, EventSettlementReviewResolve:
		d.EventType = EventSettlementPendingReview
	}
}

// invoiceFor builds the UBL invoice of a processed record: one line, EUR,
// paid in full by the USDC settlement (EUR because USDC is no ISO 4217 code,
// BR-CL-04; PrepaidAmount = total and PayableAmount = 0.00, BR-CO-16:
// https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-tc434/), under the invoicing law law.
// B2C invoices use plain EN 16931; business buyers get Peppol BIS 3.0 when
// both parties have a Peppol address (a Peppol invoice needs the buyer's,
// PEPPOL-EN16931-R010: https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-peppol/PEPPOL-EN16931-R010/).
func invoiceFor(r *Record, law invoicelaw.Law, seller, buyer *ubl.Party, a *amounts, tc *ubl.TaxCurrency, issued time.Time) (ubl.Invoice, error) {
	det := &r.Classification
	rate := decimal.Zero
	if det.RatePercent != nil {
		rate = det.RatePercent.Decimal()
	}
	code, reason := det.VATEX, det.ExemptionReason
	if law.TaxCountry == "GB" && strings.HasPrefix(code, "VATEX-EU-") {
		// UK law: no code of the EU VATEX list (VAT Regulations 1995 reg.
		// 14; ubl.RuleUKReg14); ubl writes the UK legend for O ("Outside
		// the scope of UK VAT") when the reason is left to it.
		if code == vat.VATEXOutsideScope {
			reason = ""
		}
		code = ""
	}
	profile := invoiceProfile(det, seller, buyer)
	line := ubl.Line{
		ID:              "1",
		Name:            r.Supply.Description,
		Quantity:        decimal.NewFromInt(1),
		PriceAmount:     a.net,
		NetAmount:       a.net,
		Category:        det.Category,
		RatePercent:     rate,
		ExemptionCode:   code,
		ExemptionReason: reason,
	}
	note, err := settlementNote(r)
	if err != nil {
		return ubl.Invoice{}, err
	}
	if tc != nil && !strings.HasSuffix(note, ".") {
		note += "." // ubl appends the VAT in the tax currency as a sentence of its own
	}
	return ubl.Invoice{
		Profile:    profile,
		ID:         r.ID,
		IssueDate:  invoicelaw.IssueDate(det, issued),
		TaxCountry: law.TaxCountry,
		// The date of supply (BT-72) is the local day of the chargeable
		// event in the taxing territory (vat: Determination.SupplyDate).
		// Art. 226(7) asks for it where it differs from the date of issue;
		// it is written always, which the law checks require
		// (ubl.RuleArt226_7) and which is never wrong.
		SupplyDate:     det.SupplyDate,
		Currency:       "EUR",
		TaxCurrency:    tc,
		Note:           note,
		BuyerReference: r.ID,
		Seller:         *seller,
		Buyer:          *buyer,
		Lines:          []ubl.Line{line},
		Subtotals: []ubl.TaxSubtotal{{
			Category:        det.Category,
			RatePercent:     rate,
			TaxableAmount:   a.net,
			TaxAmount:       a.vat,
			ExemptionCode:   code,
			ExemptionReason: reason,
		}},
		PaymentMeans: ubl.StablecoinPaymentMeans(seller.Country, buyer.Country, r.Settlement.TxHash),
		PaidInFull:   true,
	}, nil
}

// invoiceProfile picks the customisation: business buyers get Peppol BIS
// Billing 3.0 when both parties have a Peppol address: the seller's given
// (Seller.ElectronicAddress) or derived from its VAT number, the buyer's
// derived from its VAT number (the VAT schemes of the EAS list,
// https://docs.peppol.eu/poacc/billing/3.0/codelist/eas/); everything else, and every consumer, is
// plain EN 16931, which Peppol would reject for lack of a buyer endpoint
// (PEPPOL-EN16931-R010) but which is the right document outside Peppol.
func invoiceProfile(det *vat.Determination, seller, buyer *ubl.Party) ubl.Profile {
	if det.BuyerTreatment != "B2B" || det.OmitVATIDs() {
		return ubl.ProfileEN16931
	}
	if _, ok := ubl.EASForVATNumber(seller.VATNumber); !ok && seller.EndpointID == "" {
		return ubl.ProfileEN16931
	}
	if _, ok := ubl.EASForVATNumber(buyer.VATNumber); !ok {
		return ubl.ProfileEN16931
	}
	return ubl.ProfilePeppol
}

// settlementNote states the USDC settlement and the conversion in the one
// note the invoice may carry (PEPPOL-EN16931-R002,
// https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-peppol/PEPPOL-EN16931-R002/; UBL has
// no structured place for a crypto settlement), followed by the VAT mention
// the determination requires ("Reverse charge", Art. 226(11a) Directive
// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
func settlementNote(r *Record) (string, error) {
	rt := r.FX.USDPerEUR
	note, err := ubl.SettlementNote("EUR", ubl.Settlement{
		PaidOn:       invoicelaw.PaymentDate(&r.Classification, r.Settlement.Timestamp), // on the supply's clock
		Amount:       r.Settlement.AmountUSDC,
		Asset:        r.Settlement.Asset,
		Network:      r.Settlement.Network + " (" + networkNames[r.Settlement.Network] + ")",
		TxHash:       r.Settlement.TxHash,
		Rate:         rt.Raw,
		RateCurrency: rt.Quote,
		RateDate:     rt.RateDate,
		RateSource:   "ECB euro foreign exchange reference rate " + rt.Source + ", policy " + string(rt.Policy) + "; 1 USDC taken as " + r.FX.USDCUSD.Rate + " USD (" + r.FX.USDCUSD.Source + ")",
		Sandbox:      r.Environment == receipt.EnvSandbox,
	})
	if err != nil {
		return "", err
	}
	if det := &r.Classification; det.InvoiceNote != "" {
		note += " " + det.InvoiceNote
	}
	return note, nil
}

// InvoiceFrame starts an invoice the account issues on issued for supplies
// like r's that is not r's own (a summary invoice of several): the seller
// (the account's current profile, with the VAT number r's supply was
// made under: Art. 226(3) Directive 2006/112/EC) and the customer as the
// invoicing law of r's supply shows them (Art. 219a), the profile, the
// state and the date of issue; and the reference the entry states of it,
// with the law relied on and, for a reverse charge, the Art. 222 deadline
// counted from r's date of supply. missing names what the customer lacks of a business's name and
// address (Art. 226(5)). The caller adds the lines, totals and payment.
func (b *Books) InvoiceFrame(r *Record, issued time.Time) (inv ubl.Invoice, ref *InvoiceRef, missing []string) {
	ls := b.acc.Seller.ForInvoiceLaw().Supplying(r.Seller.VATNumber) // the number r's supply was made under
	law := invoicelaw.For(r.Classification, ls)
	seller := invoicelaw.SellerParty(ls, law)
	buyer, missing := invoicelaw.BuyerParty(r.Classification, r.Buyer.ForInvoiceLaw())
	inv = ubl.Invoice{Profile: invoiceProfile(&r.Classification, &seller, &buyer), IssueDate: invoicelaw.IssueDate(&r.Classification, issued),
		TaxCountry: law.TaxCountry, Seller: seller, Buyer: buyer}
	view := Record{Classification: r.Classification, Invoice: &InvoiceRef{Format: "UBL 2.1 Invoice", Profile: string(inv.Profile)}}
	describeLaw(&view, law, inv.IssueDate)
	return inv, view.Invoice, missing
}

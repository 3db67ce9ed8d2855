package invoicelaw

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// Reason codes the invoicing law adds to a record pending review.
const (
	// ReasonNationalRateUnavailable: the VAT must be stated in the
	// national currency of the invoicing state (Art. 230 Directive
	// 2006/112/EC) and the rate source has no rate for it at the date the
	// state's rule selects (fx.ErrNationalRateUnavailable). The ECB feeds
	// (package rates) carry every currency; the embedded table holds USD
	// only.
	ReasonNationalRateUnavailable = "national_rate_unavailable"
	// ReasonNationalRateRequired: the invoicing state does not accept the
	// ECB rate and the engine has none of the rates it accepts
	// (fx.ErrNationalRateRequired): the United Kingdom, unless the seller
	// holds HMRC's agreement to the ECB rate (Seller.UKRateAgreement).
	ReasonNationalRateRequired = "national_rate_required"
	// ReasonBuyerAddressMissing: a business sale's invoice lacks the
	// customer's full name or address (Art. 226(5); Art. 220a(2) rules out
	// a simplified invoice for reverse charge): neither the request
	// (consumerName, consumerAddress) nor the registry gave them.
	ReasonBuyerAddressMissing = "buyer_address_missing"
	// ReasonInvoiceRulesFailed: the invoice would break rules of EN 16931,
	// Peppol (national rules included) or invoicing law; the detail lists
	// the rule ids (ubl.ValidationError.Rules) and what each needs.
	ReasonInvoiceRulesFailed = "invoice_rules_failed"
)

// ReverseChargeDeadline is the last day a reverse-charge invoice may be
// issued: the 15th of the month after the supply (Art. 222 Directive
// 2006/112/EC, for services under Art. 196). "" when the supply date
// cannot be read.
func ReverseChargeDeadline(supplyDate string) string {
	d, err := time.Parse(time.DateOnly, supplyDate)
	if err != nil {
		return ""
	}
	return time.Date(d.Year(), d.Month()+1, 15, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// IssueDate is the date of issue (BT-2, Art. 226(1) Directive
// 2006/112/EC) of an invoice or credit note issued at issued for the
// supply det: the calendar day on the clock that dates the supply
// (Determination.TimeZone, the taxing territory's, whose day is the date
// of supply, Art. 226(7), BT-72; vat.LocalDate), so that a document issued
// at once is never dated the UTC day before its supply; the UTC day when
// the zone is not known.
func IssueDate(det *vat.Determination, issued time.Time) string {
	if day, ok := vat.LocalDate(det.TimeZone, issued); ok {
		return day
	}
	return issued.UTC().Format(time.DateOnly)
}

// PaymentDate is the day (YYYY-MM-DD) an invoice for the supply det
// states its payment was made (the note's "Paid in full on", ubl.
// Settlement.PaidOn) when it was made at paid (RFC 3339, the recorded
// settlement time): on the clock that dates the supply and the invoice
// (IssueDate), so that a payment at the instant of the supply is not
// dated the UTC day before it, which would read as a payment on account
// made before the supply (Art. 65 Directive 2006/112/EC: VAT chargeable
// on its receipt, at that day's rate, Art. 93) and contradict the date of
// supply (Art. 226(7)). "" when paid cannot be read.
func PaymentDate(det *vat.Determination, paid string) string {
	t, err := time.Parse(time.RFC3339Nano, paid)
	if err != nil {
		return ""
	}
	return IssueDate(det, t)
}

// RulesReason is the review reason of an invoice that cannot be rendered:
// the rule ids and, per problem, the field and what it needs. skip are
// rules another reason of the record already explains.
func RulesReason(ve *ubl.ValidationError, law Law, skip ...string) *vat.Reason {
	var rules, details []string
	for _, p := range ve.Problems {
		if p.Rule != "" && slices.Contains(skip, p.Rule) {
			continue
		}
		id := p.Rule
		if id == "" {
			id = "field:" + p.Field
		}
		if !slices.Contains(rules, id) {
			rules = append(rules, id)
		}
		details = append(details, p.Error())
	}
	if len(rules) == 0 {
		return nil
	}
	where := "no EU or UK invoicing law"
	if law.TaxCountry != "" {
		where = "the invoicing rules of " + law.TaxCountry
	}
	return &vat.Reason{Code: ReasonInvoiceRulesFailed, Detail: fmt.Sprintf(
		"The invoice cannot be issued under %s (%s): it would break %s. %s. The seller's account or the buyer facts must supply what is missing.",
		where, law.Basis, strings.Join(rules, ", "), strings.Join(details, "; "))}
}

// WaitRefusal refuses a person's manual determination of a record whose
// state, decided with it, still waits for a rate not yet published: the
// ECB rate of its EUR amounts (reason fxCode, the engine's
// fx_rate_unavailable) or the rate of the national currency its VAT must
// also be stated in (ReasonNationalRateUnavailable). The revision made
// once the rate is published decides by the rules again (package rates),
// so a determination accepted now would be silently dropped then; the
// person determines once the rate is out. nil when nothing waits.
func WaitRefusal(reasons []vat.Reason, fxCode string) error {
	has := func(code string) bool {
		return slices.ContainsFunc(reasons, func(r vat.Reason) bool { return r.Code == code })
	}
	switch {
	case has(fxCode):
		return &vat.ManualError{Code: fxCode, Field: "/determination", Fact: "supply.grossEUR", Detail: "The ECB rate of the day of supply is not published yet, so the supply's EUR amount (and its Art. 59c count) is unknown; the record is decided again when it is: determine it then."}
	case has(ReasonNationalRateUnavailable):
		return &vat.ManualError{Code: ReasonNationalRateUnavailable, Field: "/determination", Fact: "supply.nationalRate", Detail: "The rate of the national currency the VAT must also be stated in (Art. 230 Directive 2006/112/EC) is not published yet, so the invoice cannot be issued; the record is decided again when it is: determine it then."}
	}
	return nil
}

package returns

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CSVHeader is the header row of a return's CSV (WriteCSV).
var CSVHeader = []string{"period", "status", "scheme", "ossIdentificationNumber", "memberStateOfIdentification",
	"section", "establishment", "establishmentVatNumber", "originalPeriod", "memberState", "ratePercent", "rateType", "supplyType", "records", "amountUsdc",
	"usdPerEur", "taxableAmountEur", "vatEur", "invoiceTaxableAmountEur", "invoiceVatEur", "differenceVatEur", "ledgerIndexes", "note"}

// CSV sections (the "section" column).
const (
	// SectionReview rows carry, one each and before the figures, what a
	// person must check before filing (Return.Review), in column "note";
	// their figure columns are empty.
	SectionReview             = "review"
	SectionLine               = "oss"
	SectionFixedEstablishment = "fixed_establishment"
	SectionCorrection         = "correction"
	// SectionMemberState rows, one per member state of consumption after
	// the corrections, are its total (Return.MemberStates): vatEur and
	// invoiceVatEur, and in "note" its corrections' part
	// ("correctionsVatEur -1.70") when it has corrections.
	SectionMemberState = "member_state"
	// SectionPayable is one row, after the corrections: the VAT to pay
	// (Return.Payable), the sum of the member states' positive balances,
	// in vatEur and invoiceVatEur; "note" names the member states whose
	// negative balance they refund, and why it is not offset.
	SectionPayable     = "payable"
	SectionNotInOSS    = "not_in_oss"
	SectionPending     = "excluded_pending"
	SectionOtherScheme = "excluded_other_scheme"
	SectionOtherState  = "excluded_other_state"
	SectionFormerState = "excluded_former_state"
	SectionTimeBarred  = "excluded_time_barred"
)

// WriteCSV writes the return as CSV (RFC 4180): the header, then one row of
// section "review" for Identification.Missing, if any (prefixed
// "identification: "), and one per item of Return.Review (the text in the last column,
// "note", the figure columns empty), so that a reader of the CSV alone is
// warned as the JSON's is, then one row per line, fixed-establishment line,
// correction, member state total (section "member_state"), the row of
// section "payable" (Return.Payable), non-OSS
// summary and excluded bucket (its Reason, if any, in
// "note"). Every row repeats the period, the status and the
// identification, so a row read alone says what it belongs to;
// ledgerIndexes are separated by spaces. A row of section
// "fixed_establishment" names the establishment's member state and its VAT
// identification number (Section.VATNumber, Art. 369g(3) Directive
// 2006/112/EC). The signature is in the JSON form
// only.
func WriteCSV(w io.Writer, r *Return) error {
	cw := csv.NewWriter(w)
	rate := ""
	if r.FX.Rate != nil {
		rate = r.FX.Rate.Raw
	}
	head := []string{r.Period, r.Status, r.Scheme, r.ID.Number, r.ID.MemberState}
	note := ""
	row := func(section, est, estVAT, orig, state, pct, kind, typ string, a Amounts, rate string, idx []int64) error {
		rec := append(append([]string{}, head...), section, est, estVAT, orig, state, pct, kind, typ, strconv.Itoa(a.Records), a.AmountUSDC,
			rate, a.TaxableAmountEUR, a.VATEUR, a.InvoiceTaxableAmountEUR, a.InvoiceVATEUR, a.DifferenceVATEUR, joinIndexes(idx), note)
		return cw.Write(rec)
	}
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	review := r.Review
	if r.ID.Missing != "" {
		// What the identification lacks, or that it covers only some
		// days of the period (Identification.Missing), warns as a review
		// item does: the rows repeat the number and state, not this.
		review = append([]string{"identification: " + r.ID.Missing}, review...)
	}
	for _, text := range review {
		rec := append(append([]string{}, head...), SectionReview)
		rec = append(rec, make([]string, len(CSVHeader)-len(rec)-1)...)
		if err := cw.Write(append(rec, text)); err != nil {
			return err
		}
	}
	for _, l := range r.Lines {
		if err := row(SectionLine, "", "", "", l.MemberState, l.RatePercent, l.RateType, l.SupplyType, l.Amounts, rate, l.LedgerIndexes); err != nil {
			return err
		}
	}
	for _, s := range r.FixedEstablishments {
		for _, l := range s.Lines {
			if err := row(SectionFixedEstablishment, s.Establishment, s.VATNumber, "", l.MemberState, l.RatePercent, l.RateType, l.SupplyType, l.Amounts, rate, l.LedgerIndexes); err != nil {
				return err
			}
		}
	}
	for _, c := range r.Corrections {
		// A correction is converted at its original period's end rate
		// (Correction.USDPerEUR; empty while it is not published).
		crate := ""
		if c.USDPerEUR != nil {
			crate = c.USDPerEUR.Raw
		}
		if err := row(SectionCorrection, c.Establishment, "", c.OriginalPeriod, c.MemberState, c.RatePercent, c.RateType, c.SupplyType, c.Amounts, crate, c.LedgerIndexes); err != nil {
			return err
		}
	}
	for _, st := range r.MemberStates {
		rec := append(append([]string{}, head...), SectionMemberState)
		rec = append(rec, make([]string, len(CSVHeader)-len(rec))...)
		rec[slices.Index(CSVHeader, "memberState")] = st.MemberState
		rec[slices.Index(CSVHeader, "vatEur")] = st.VATEUR
		rec[slices.Index(CSVHeader, "invoiceVatEur")] = st.InvoiceVATEUR
		if st.CorrectionsVATEUR != "" {
			rec[len(rec)-1] = "correctionsVatEur " + st.CorrectionsVATEUR
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	if p := r.Payable; p.InvoiceVATEUR != "" {
		if p.Note != "" {
			note = "refundedBy " + strings.Join(p.RefundedBy, " ") + ": " + p.Note
		}
		rec := append(append([]string{}, head...), SectionPayable)
		rec = append(rec, make([]string, len(CSVHeader)-len(rec))...)
		rec[slices.Index(CSVHeader, "vatEur")] = p.VATEUR
		rec[slices.Index(CSVHeader, "invoiceVatEur")] = p.InvoiceVATEUR
		rec[len(rec)-1] = note
		note = ""
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	for _, s := range r.NotInOSS {
		if err := row(SectionNotInOSS+":"+s.Regime, "", "", "", s.Country, s.RatePercent, "", SupplyServices, s.Amounts, "", s.LedgerIndexes); err != nil {
			return err
		}
	}
	for _, b := range []struct {
		section string
		b       Bucket
	}{{SectionPending, r.Excluded.Pending}, {SectionOtherScheme, r.Excluded.OtherScheme}, {SectionOtherState, r.Excluded.OtherState}, {SectionFormerState, r.Excluded.FormerState},
		{SectionTimeBarred, r.Excluded.TimeBarred}} {
		if b.b.Records == 0 {
			continue
		}
		note = b.b.Reason
		if err := row(b.section, "", "", "", "", "", "", "", Amounts{Records: b.b.Records, AmountUSDC: b.b.AmountUSDC}, "", b.b.LedgerIndexes); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func joinIndexes(idx []int64) string {
	var b strings.Builder
	for i, n := range idx {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	return b.String()
}

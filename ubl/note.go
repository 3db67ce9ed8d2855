package ubl

import "strings"

// Settlement is the on-chain payment an invoice records. UBL has no
// structured place for it: a crypto-asset is not an ISO 4217 currency
// (BR-CL-04; the list is https://docs.peppol.eu/poacc/billing/3.0/codelist/ISO4217/)
// and the exchange-rate element draws UBL-CR-490 (EN 16931 validation
// artefacts, https://github.com/ConnectingEurope/eInvoicing-EN16931,
// ubl/schematron), so it is stated in the invoice note, BT-22
// (https://docs.peppol.eu/poacc/billing/3.0/syntax/ubl-invoice/cbc-Note/). All fields are strings as
// the fiscal record holds them, so nothing is re-rounded or re-formatted.
type Settlement struct {
	PaidOn  string // settlement date, YYYY-MM-DD
	Amount  string // settled amount as a decimal string, e.g. "119.000000"
	Asset   string // e.g. "USDC"
	Network string // CAIP-2 chain id, e.g. "eip155:8453"
	TxHash  string // transaction hash

	// The conversion into the invoice currency: 1 unit of the invoice
	// currency = Rate RateCurrency, e.g. 1 EUR = 1.0512 USD (the ECB
	// reference rate as published, unrounded).
	Rate         string
	RateCurrency string // e.g. "USD"
	RateDate     string // date of the rate publication, YYYY-MM-DD
	RateSource   string // e.g. "ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD"

	// Sandbox marks a document produced by the sandbox: the note then opens
	// with a watermark saying it is not an invoice.
	Sandbox bool
}

// SandboxWatermark opens the note of every sandbox document.
const SandboxWatermark = "SANDBOX TEST DOCUMENT - NOT A VALID INVOICE."

// isDecimalText reports whether s is digits with an optional fraction,
// ^[0-9]+(\.[0-9]+)?$ (a loop: the note is written for every settlement).
func isDecimalText(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	return isDigits(whole) && (!dot || isDigits(frac))
}

// isDigits reports whether s is one or more ASCII digits, ^[0-9]+$.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// SettlementNote formats the single invoice note (BT-22) stating how the
// invoice was paid, for Invoice.Note. currency is the invoice currency
// (BT-5). Example:
//
//	Paid in full on 2026-11-20: 119.000000 USDC on eip155:8453, tx 0xab…;
//	converted at 1 EUR = 1.0512 USD as of 2026-11-19 (ECB euro foreign
//	exchange reference rate; 1 USDC taken as 1 USD).
//
// It returns a *ValidationError when a field is missing or cannot be written
// into XML; the field paths are those of Settlement.
func SettlementNote(currency string, s Settlement) (string, error) {
	c := &checker{}
	c.code("Currency", "", currency)
	c.date("PaidOn", "", s.PaidOn)
	if c.code("Amount", "", s.Amount) && !isDecimalText(s.Amount) {
		c.addf("Amount", "", ErrFormat, "%q is not a decimal number", s.Amount)
	}
	c.code("Asset", "", s.Asset)
	c.code("Network", "", s.Network)
	c.code("TxHash", "", s.TxHash)
	if c.code("Rate", "", s.Rate) && !isDecimalText(s.Rate) {
		c.addf("Rate", "", ErrFormat, "%q is not a decimal number", s.Rate)
	}
	c.code("RateCurrency", "", s.RateCurrency)
	c.date("RateDate", "", s.RateDate)
	c.required("RateSource", "", s.RateSource)
	if err := c.err(); err != nil {
		return "", err
	}
	parts := [...]string{
		"Paid in full on ", s.PaidOn, ": ", s.Amount, " ", s.Asset, " on ", s.Network, ", tx ", s.TxHash,
		"; converted at 1 ", currency, " = ", s.Rate, " ", s.RateCurrency, " as of ", s.RateDate,
		" (", s.RateSource, ").",
	}
	n := 0
	if s.Sandbox {
		n += len(SandboxWatermark) + 1
	}
	for _, p := range parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n) // one allocation
	if s.Sandbox {
		b.WriteString(SandboxWatermark)
		b.WriteString(" ")
	}
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String(), nil
}

// Refund is the refund a credit note records: the USDC given back, its
// transfer when there is one, and the rate of the invoice it corrects.
// Like Settlement, every field is a string as the record holds it.
type Refund struct {
	RefundedOn string // the refund's date, YYYY-MM-DD
	Amount     string // refunded amount as a decimal string, e.g. "5.000000"
	Asset      string // e.g. "USDC"
	Network    string // CAIP-2 chain id of the refund transfer; "" when none was given
	TxHash     string // the refund transfer's hash; "" when none was given

	// Invoice is the number of the invoice corrected (BT-25).
	Invoice string
	// The rate of that invoice, which the credit note keeps (the
	// correction mirrors the supply): 1 unit of the document currency =
	// Rate RateCurrency as of RateDate.
	Rate, RateCurrency, RateDate string
	Reason                       string // optional free text
	Sandbox                      bool
}

// RefundNote formats the single note (BT-22) of a credit note that
// refunds a stablecoin settlement, for CreditNote.Note. Example:
//
//	Refund on 2026-02-03 of 5.000000 USDC, tx 0xcd… on eip155:8453,
//	correcting invoice F402-2026-000001; amounts at that invoice's rate,
//	1 EUR = 1.1624 USD as of 2026-01-14. Reason: not delivered.
//
// It returns a *ValidationError when a field is missing or cannot be
// written into XML; the field paths are those of Refund.
func RefundNote(currency string, r Refund) (string, error) {
	c := &checker{}
	c.code("Currency", "", currency)
	c.date("RefundedOn", "", r.RefundedOn)
	if c.code("Amount", "", r.Amount) && !isDecimalText(r.Amount) {
		c.addf("Amount", "", ErrFormat, "%q is not a decimal number", r.Amount)
	}
	c.code("Asset", "", r.Asset)
	if (r.Network == "") != (r.TxHash == "") {
		c.addf("TxHash", "", ErrRequired, "network and tx hash of the refund transfer go together")
	}
	c.code("Invoice", "", r.Invoice)
	if c.code("Rate", "", r.Rate) && !isDecimalText(r.Rate) {
		c.addf("Rate", "", ErrFormat, "%q is not a decimal number", r.Rate)
	}
	c.code("RateCurrency", "", r.RateCurrency)
	c.date("RateDate", "", r.RateDate)
	if r.Reason != "" {
		c.text("Reason", r.Reason)
	}
	if err := c.err(); err != nil {
		return "", err
	}
	var b strings.Builder
	if r.Sandbox {
		b.WriteString(SandboxWatermark)
		b.WriteString(" ")
	}
	b.WriteString("Refund on " + r.RefundedOn + " of " + r.Amount + " " + r.Asset)
	if r.TxHash != "" {
		b.WriteString(", tx " + r.TxHash + " on " + r.Network)
	}
	b.WriteString(", correcting invoice " + r.Invoice + "; amounts at that invoice's rate, 1 " + currency + " = " + r.Rate + " " + r.RateCurrency + " as of " + r.RateDate + ".")
	if r.Reason != "" {
		// The reason ends the note as a sentence: its own full stop (or
		// ! or ?) is kept, not doubled.
		reason := strings.TrimSpace(r.Reason)
		b.WriteString(" Reason: " + reason)
		if !strings.HasSuffix(reason, ".") && !strings.HasSuffix(reason, "!") && !strings.HasSuffix(reason, "?") {
			b.WriteString(".")
		}
	}
	return b.String(), nil
}

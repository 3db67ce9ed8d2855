package ubl

import (
	"regexp"
	"strings"
)

// Settlement is the on-chain payment an invoice records. UBL has no
// structured place for it: a crypto-asset is not an ISO 4217 currency
// (BR-CL-04) and the exchange-rate element draws UBL-CR-490, so it is stated
// in the invoice note, BT-22 (research/ubl.md §5). All fields are strings as
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

var reDecimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

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
	if c.code("Amount", "", s.Amount) && !reDecimal.MatchString(s.Amount) {
		c.addf("Amount", "", ErrFormat, "%q is not a decimal number", s.Amount)
	}
	c.code("Asset", "", s.Asset)
	c.code("Network", "", s.Network)
	c.code("TxHash", "", s.TxHash)
	if c.code("Rate", "", s.Rate) && !reDecimal.MatchString(s.Rate) {
		c.addf("Rate", "", ErrFormat, "%q is not a decimal number", s.Rate)
	}
	c.code("RateCurrency", "", s.RateCurrency)
	c.date("RateDate", "", s.RateDate)
	c.required("RateSource", "", s.RateSource)
	if err := c.err(); err != nil {
		return "", err
	}
	var b strings.Builder
	if s.Sandbox {
		b.WriteString(SandboxWatermark)
		b.WriteString(" ")
	}
	b.WriteString("Paid in full on " + s.PaidOn + ": " + s.Amount + " " + s.Asset + " on " + s.Network + ", tx " + s.TxHash)
	b.WriteString("; converted at 1 " + currency + " = " + s.Rate + " " + s.RateCurrency + " as of " + s.RateDate)
	b.WriteString(" (" + s.RateSource + ").")
	return b.String(), nil
}

package audit

import (
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
)

// The words the commands print for codes a person does not read fluently:
// countries, networks, VAT regimes, review states. An unknown code is
// printed as it is: these tables only make output easier to read and never
// decide a check.

// countryNames are the English short names of ISO 3166-1 (as in Debian
// iso-codes, iso_3166-1.json) of the countries whose VAT a receipt can
// name: the 27 EU member states (Art. 52 TEU), the United Kingdom, the EEA
// and EFTA states, and Northern Ireland's VAT prefix XI (HMRC VAT Notice
// 700/1 §2.4; not an ISO code).
var countryNames = map[string]string{
	"AT": "Austria", "BE": "Belgium", "BG": "Bulgaria", "HR": "Croatia", "CY": "Cyprus",
	"CZ": "Czechia", "DK": "Denmark", "EE": "Estonia", "FI": "Finland", "FR": "France",
	"DE": "Germany", "GR": "Greece", "HU": "Hungary", "IE": "Ireland", "IT": "Italy",
	"LV": "Latvia", "LT": "Lithuania", "LU": "Luxembourg", "MT": "Malta", "NL": "Netherlands",
	"PL": "Poland", "PT": "Portugal", "RO": "Romania", "SK": "Slovakia", "SI": "Slovenia",
	"ES": "Spain", "SE": "Sweden",
	"GB": "United Kingdom", "XI": "Northern Ireland",
	"NO": "Norway", "IS": "Iceland", "LI": "Liechtenstein", "CH": "Switzerland",
	"US": "United States", "JP": "Japan", "CA": "Canada", "AU": "Australia",
}

// country is "France (FR)", or the code alone when it has no name here.
func country(code string) string {
	if code == "" {
		return "not stated"
	}
	if name, ok := countryNames[code]; ok {
		return name + " (" + code + ")"
	}
	return code
}

// networkNames name the CAIP-2 chains the service supports (evmverify:
// eip155:8453 Base, eip155:1 Ethereum; chain ids per EIP-155 and the chains'
// own documentation) and their public test networks.
var networkNames = map[string]string{
	"eip155:8453":     "Base",
	"eip155:1":        "Ethereum",
	"eip155:84532":    "Base Sepolia (test network)",
	"eip155:11155111": "Ethereum Sepolia (test network)",
}

func network(id string) string {
	if name, ok := networkNames[id]; ok {
		return name + " (" + id + ")"
	}
	return id
}

// regimeWords explain the vat package's regimes (vat/vat.go) in a phrase.
var regimeWords = map[string]string{
	"OSS_B2C":            "VAT of the customer's country, declared through the One-Stop Shop (Art. 58 Directive 2006/112/EC)",
	"DOMESTIC":           "VAT of the seller's own country",
	"REVERSE_CHARGE_B2B": "reverse charge: the business customer accounts for the VAT (Art. 44 and 196 Directive 2006/112/EC)",
	"OUTSIDE_SCOPE":      "outside the scope of the VAT the ruleset covers (place of supply elsewhere)",
	"UK_DOMESTIC":        "UK VAT of a UK-established seller",
	"UK_B2C":             "UK VAT charged by a non-established seller to a UK consumer",
	"UK_REVERSE_CHARGE":  "reverse charge: the UK business customer accounts for the VAT (VATA 1994 s.8)",
}

// reviewWords say what a review status means for the reader.
func reviewWords(status string) string {
	switch status {
	case receipt.ReviewProcessed:
		return "processed: the VAT treatment was determined"
	case receipt.ReviewPending:
		return "pending manual review: no VAT determination yet"
	}
	return status
}

// instant formats an RFC 3339 time as "2026-04-10 10:00:00 UTC".
func instant(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		return rfc3339
	}
	return unixTime(t.Unix())
}

func unixTime(sec int64) string { return time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05 UTC") }

// tax describes the classification in one phrase: "VAT of France (FR) at
// 20 %: <regime words>".
func tax(k *receipt.Classification) string {
	if k == nil {
		return "no VAT determination in the receipt"
	}
	var parts []string
	if k.TaxingCountry != "" && k.RatePercent != "" {
		parts = append(parts, fmt.Sprintf("%s %% VAT of %s", k.RatePercent, country(k.TaxingCountry)))
	} else if k.RatePercent != "" {
		parts = append(parts, k.RatePercent+" % VAT")
	} else if k.TaxingCountry != "" {
		parts = append(parts, "taxed in "+country(k.TaxingCountry))
	}
	if w, ok := regimeWords[k.Regime]; ok {
		parts = append(parts, w)
	} else if k.Regime != "" {
		parts = append(parts, k.Regime)
	}
	if k.OSSScheme != "" {
		parts = append(parts, k.OSSScheme+" scheme")
	}
	if len(parts) == 0 {
		return "status " + k.Status
	}
	return strings.Join(parts, "; ")
}

// wrap breaks text into lines of at most width runes (words longer than
// that stand alone), each line after the first prefixed with indent.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(text) {
		n := len([]rune(w))
		if i > 0 {
			if line+1+n > width {
				b.WriteString("\n" + indent)
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(w)
		line += n
	}
	return b.String()
}

// sentence capitalises the first letter of a message written to follow a
// colon, so that it can stand on its own line.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	r := []rune(msg)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	s := string(r)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

package ubl

import "strings"

// AddressFromRegistry splits the free-text address a VAT registry returns
// (VIES gives one block, usually one line per address line, the last one
// with post code and town) into the address fields of a Party, keeping
// every character of it: the last line becomes City (BT-52, post code
// included, e.g. "1040 WIEN"), the lines before it Street,
// AdditionalStreet and AddressLine3 (lines beyond the third are joined to
// AddressLine3 with ", "). A single line is split at its last comma when
// it has one ("12 RUE X, 75001 PARIS"); without one it is all Street, and
// City stays empty, so that a business sale under TaxCountry goes to
// review (RuleArt226_5) rather than out with a guessed town. VIES's "---"
// (not disclosed) and blank text give an empty address. Country and
// PostalCode are left to the caller.
func AddressFromRegistry(addr string) Party {
	var lines []string
	for _, l := range strings.FieldsFunc(addr, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.Join(strings.Fields(l), " "); l != "" && l != "---" {
			lines = append(lines, l)
		}
	}
	var p Party
	switch len(lines) {
	case 0:
		return p
	case 1:
		if i := strings.LastIndex(lines[0], ","); i > 0 && strings.TrimSpace(lines[0][i+1:]) != "" {
			p.Street, p.City = strings.TrimSpace(lines[0][:i]), strings.TrimSpace(lines[0][i+1:])
		} else {
			p.Street = lines[0]
		}
		return p
	}
	p.City = lines[len(lines)-1]
	rest := lines[:len(lines)-1]
	p.Street = rest[0]
	if len(rest) > 1 {
		p.AdditionalStreet = rest[1]
	}
	if len(rest) > 2 {
		p.AddressLine3 = strings.Join(rest[2:], ", ")
	}
	return p
}

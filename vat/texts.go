package vat

// Texts that name only a country, built in advance.
//
// Some reasons and notes differ only in the country they name. For every
// country the rulesets tax in (countryZones: the EU-27 and GB) they are
// built once at package initialisation into countryTable (countryfacts.go)
// and never modified afterwards, so that Determine copies a string instead
// of concatenating one; any other country is concatenated as before. The
// functions that build a text are the only source of its wording.

// Kinds of country texts (index into countryFacts.texts).
const (
	textOriginInvoiceNote = iota // originInvoiceNote (determine.go)
	textOriginNoteTotals         // originNoteText with running totals (threshold.go)
	textOriginNoteStated         // originNoteText without (threshold.go)
	textSingleAssertion          // singleAssertionNote (evidence.go)
	numCountryTexts
)

// makeCountryText builds text kind of country cc.
func makeCountryText(cc string, kind int) string {
	switch kind {
	case textOriginInvoiceNote:
		return originInvoiceNote(cc)
	case textOriginNoteTotals:
		return originNoteText(cc, true)
	case textOriginNoteStated:
		return originNoteText(cc, false)
	}
	return singleAssertionNote(cc)
}

// countryText is text kind of country cc.
func countryText(cc string, kind int) string {
	if t := factsOf(cc).texts; t != nil { // countryfacts.go
		return t[kind]
	}
	return makeCountryText(cc, kind)
}

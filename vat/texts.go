package vat

// Texts that name only a country, built in advance.
//
// Some reasons and notes differ only in the country they name. For every
// country the rulesets tax in (countryZones: the EU-27 and GB) they are
// built once at package initialisation and never modified afterwards, so
// that Determine copies a string instead of concatenating one; any other
// country is concatenated as before. The functions that build a text are
// the only source of its wording.

// Kinds of country texts (index into countryTexts).
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

var textsByCountry = func() map[string]*[numCountryTexts]string {
	m := make(map[string]*[numCountryTexts]string, len(countryZones))
	for cc := range countryZones {
		var t [numCountryTexts]string
		for kind := range t {
			t[kind] = makeCountryText(cc, kind)
		}
		m[cc] = &t
	}
	return m
}()

// countryText is text kind of country cc.
func countryText(cc string, kind int) string {
	if t, ok := textsByCountry[cc]; ok {
		return t[kind]
	}
	return makeCountryText(cc, kind)
}

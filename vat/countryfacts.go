package vat

// countryFacts is what the rules look up about a two-letter code: whether
// it is an ISO 3166-1 code (isoCountries), a member state
// (euMemberStates), the special territory it names (countryTerritories),
// its time zone (countryZones) and its country texts (texts.go). The table
// is built once at package initialisation from those sources and never
// modified afterwards; indexing it replaces a map lookup per question on
// the hot path of Determine.
type countryFacts struct {
	iso       bool
	euMember  bool
	territory *territory
	zone      *zone
	texts     *[numCountryTexts]string
}

// countryTable holds the facts of every code AA … ZZ at countryIndex.
var countryTable = func() *[26 * 26]countryFacts {
	var t [26 * 26]countryFacts
	for i := range t {
		cc := string([]byte{byte('A' + i/26), byte('A' + i%26)})
		f := &t[i]
		f.iso, f.euMember, f.territory = isoCountries[cc], euMemberStates[cc], countryTerritories[cc]
		if name, ok := countryZones[cc]; ok {
			f.zone = zones[name]
			var texts [numCountryTexts]string
			for kind := range texts {
				texts[kind] = makeCountryText(cc, kind)
			}
			f.texts = &texts
		}
	}
	return &t
}()

// countryIndex is the index of a code of two upper-case letters in
// countryTable; ok is false for anything else.
func countryIndex(cc string) (i int, ok bool) {
	if len(cc) != 2 {
		return 0, false
	}
	a, b := cc[0]-'A', cc[1]-'A'
	if a >= 26 || b >= 26 {
		return 0, false
	}
	return int(a)*26 + int(b), true
}

// factsOf returns the facts of code cc (already normalised); none for
// anything that is not two upper-case letters.
func factsOf(cc string) countryFacts {
	if i, ok := countryIndex(cc); ok {
		return countryTable[i]
	}
	return countryFacts{}
}

// isEUMember reports whether cc is one of euMemberStates.
func isEUMember(cc string) bool { return factsOf(cc).euMember }

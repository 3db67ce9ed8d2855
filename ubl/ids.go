package ubl

import (
	"regexp"
	"strings"
)

// Identifier syntax checks of the Peppol BIS 3.0.21 rules PEPPOL-COMMON-R040
// … R057. Peppol applies them to cbc:EndpointID, PartyIdentification/ID and
// cbc:CompanyID carrying the scheme, so they guard both EndpointID/
// EndpointScheme and LegalID/LegalIDScheme. The renderer applies them under
// both profiles: a GLN with a wrong check digit is wrong in any invoice.
//
// Each check is a port of the XSLT function of PEPPOL-EN16931-UBL.xslt; where
// the XSLT is lax (e.g. xs:integer castability, which allows a sign) the port
// is stricter (digits only), never laxer. Peppol flags some of these as
// warnings only (R044, R045, R047, R054, R056-1); the renderer rejects them
// all the same, since an identifier with a wrong check digit is wrong data.
// TestSchemeRulesAgainstPeppol runs the ports' test vectors through the
// Peppol artefact itself.

// schemeRule is a Peppol identifier rule: its id, a description of the
// expected form, and the check.
type schemeRule struct {
	rule, want string
	ok         func(string) bool
}

var (
	reIPA  = regexp.MustCompile(`^[A-Za-z0-9]{6}$`)
	reCF16 = regexp.MustCompile(`^[A-Za-z]{6}[0-9]{2}[A-Za-z][0-9]{2}[A-Za-z0-9]{3}[0-9][A-Za-z]$`)
)

// The fixed-form identifiers of the Peppol and national rules, which give
// them as regular expressions (^NL[0-9]{9}B[0-9]{2}$ is "NL999999999B99"):
// checked with hasShape, no regexp on the render path
// (TestShapesMatchRegexps holds each to its expression).
const (
	shapeDigits8  = "99999999"
	shapeDigits9  = "999999999"
	shapeDigits10 = "9999999999"
	shapeDigits11 = "99999999999"
	shapeDigits12 = "999999999999"
	shapeDigits20 = "99999999999999999999"
	shapeDK8      = "DK99999999"
	shapeNLVAT    = "NL999999999B99"
	shapeNOVAT    = "NO999999999MVA"
	shapeSEVAT    = "SE999999999999"
	// shapeEUOSS is the form of a non-Union scheme number, "EU" and 9
	// digits: Art. 362 Directive 2006/112/EC has the member state of
	// identification allocate it; the form is the one those numbers take
	// (e.g. EU372022452), as python-stdnum's stdnum/eu/oss.py checks it.
	shapeEUOSS = "EU999999999"
)

// hasShape reports whether s is shape with each '9' of shape standing for
// one ASCII digit and every other byte for itself.
func hasShape(s, shape string) bool {
	if len(s) != len(shape) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if shape[i] == '9' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != shape[i] {
			return false
		}
	}
	return true
}

// shaped returns hasShape for one shape, for a schemeRule.
func shaped(shape string) func(string) bool {
	return func(s string) bool { return hasShape(s, shape) }
}

// schemeRuleFor returns the Peppol syntax rule for identifiers of an ICD/EAS
// scheme, or ok=false when Peppol checks no syntax for it.
func schemeRuleFor(scheme string) (schemeRule, bool) {
	switch scheme {
	case "0088":
		return schemeRule{"PEPPOL-COMMON-R040", "a GLN (digits with a valid GS1 check digit)", func(s string) bool {
			return isDigits(s) && glnOK(s)
		}}, true
	case "0192":
		return schemeRule{"PEPPOL-COMMON-R041", "a Norwegian organisation number (9 digits, mod 11)", func(s string) bool {
			return hasShape(s, shapeDigits9) && mod11OK(s)
		}}, true
	case "0184":
		return schemeRule{"PEPPOL-COMMON-R042", "a Danish CVR number (8 digits, optionally prefixed DK)", func(s string) bool {
			return hasShape(s, shapeDigits8) || hasShape(s, shapeDK8)
		}}, true
	case "0096":
		return schemeRule{"PEPPOL-COMMON-R052", "a Danish P number (10 digits)", shaped(shapeDigits10)}, true
	case "0198":
		return schemeRule{"PEPPOL-COMMON-R053", "a Danish ERSTORG number (DK + 8 digits)", shaped(shapeDK8)}, true
	case "0208":
		return schemeRule{"PEPPOL-COMMON-R043", "a Belgian enterprise number (10 digits, mod 97)", func(s string) bool {
			return hasShape(s, shapeDigits10) && mod97BEOK(s)
		}}, true
	case "0201":
		return schemeRule{"PEPPOL-COMMON-R044", "an Italian IPA code (6 letters or digits)", reIPA.MatchString}, true
	case "0210":
		return schemeRule{"PEPPOL-COMMON-R045", "an Italian codice fiscale (16 characters or 11 digits)", func(s string) bool {
			return reCF16.MatchString(s) || hasShape(s, shapeDigits11)
		}}, true
	case "0211":
		return schemeRule{"PEPPOL-COMMON-R047", "an Italian partita IVA (optionally IT, then 11 digits with a valid check digit)", func(s string) bool {
			return pivaOK(strings.TrimPrefix(s, "IT"))
		}}, true
	case "0007":
		return schemeRule{"PEPPOL-COMMON-R049", "a Swedish organisation number (10 digits, Luhn)", seOrgnrOK}, true
	case "0151":
		return schemeRule{"PEPPOL-COMMON-R050", "an Australian Business Number (11 digits, mod 89)", func(s string) bool {
			return hasShape(s, shapeDigits11) && abnOK(s)
		}}, true
	case "0106":
		return schemeRule{"PEPPOL-COMMON-R054", "a Dutch KvK number (8 digits)", shaped(shapeDigits8)}, true
	case "0190":
		return schemeRule{"PEPPOL-COMMON-R055", "a Dutch OIN (20 digits)", shaped(shapeDigits20)}, true
	case "9944":
		return schemeRule{"PEPPOL-COMMON-R056-1", "a Dutch VAT number (NL999999999B99)", shaped(shapeNLVAT)}, true
	case "0217":
		return schemeRule{"PEPPOL-COMMON-R057", "a Dutch KvK establishment number (12 digits)", shaped(shapeDigits12)}, true
	}
	return schemeRule{}, false
}

func digit(b byte) int { return int(b - '0') }

// glnOK is u:gln: GS1 mod-10 with weights 3,1,3,… from the right, check
// digit excluded.
func glnOK(s string) bool {
	n := len(s) - 1
	sum := 0
	for i := 0; i < n; i++ {
		w := 1
		if i%2 == 0 {
			w = 3
		}
		sum += digit(s[n-1-i]) * w
	}
	return (10-sum%10)%10 == digit(s[n])
}

// mod11OK is u:mod11: weights 2..7 repeating from the right, check digit
// excluded; the number must be > 0.
func mod11OK(s string) bool {
	n := len(s) - 1
	sum, nonzero := 0, false
	for i := 0; i < n; i++ {
		sum += digit(s[n-1-i]) * (i%6 + 2)
	}
	for i := 0; i < len(s); i++ {
		nonzero = nonzero || s[i] != '0'
	}
	return nonzero && (11-sum%11)%11 == digit(s[n])
}

// mod97BEOK is u:mod97-0208: the last two digits equal 97 − (first eight mod 97).
func mod97BEOK(s string) bool {
	v := 0
	for i := 0; i < 8; i++ {
		v = v*10 + digit(s[i])
	}
	return 97-v%97 == digit(s[8])*10+digit(s[9])
}

// pivaOK is u:checkPIVA on 11 digits: Luhn-style sum where every second
// digit (from the left, starting with the second) is doubled with its digits
// summed; the total must be divisible by 10.
func pivaOK(s string) bool {
	if !hasShape(s, shapeDigits11) {
		return false
	}
	sum := 0
	for i := 0; i < len(s); i++ {
		d := digit(s[i])
		if i%2 == 1 {
			d = int("0246813579"[d] - '0')
		}
		sum += d
	}
	return sum%10 == 0
}

// seOrgnrOK is the Swedish organisation number check of PEPPOL-COMMON-R049
// and SE-R-003/004/013: 10 digits, Luhn over the first nine.
func seOrgnrOK(s string) bool {
	if !hasShape(s, shapeDigits10) {
		return false
	}
	sum := 0
	for pos := 1; pos <= 9; pos++ {
		d := digit(s[9-pos])
		if pos%2 == 1 {
			d *= 2
			d = d%10 + d/10
		}
		sum += d
	}
	return (10-sum%10)%10 == digit(s[9])
}

// abnOK is u:abn: weights 10,1,3,5,…,19 with 1 subtracted from the first
// digit; the sum must be divisible by 89.
func abnOK(s string) bool {
	weights := [11]int{10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19}
	sum := 0
	for i := 0; i < 11; i++ {
		d := digit(s[i])
		if i == 0 {
			d--
		}
		sum += d * weights[i]
	}
	return sum%89 == 0
}

// noVATOK is NO-R-001: NO, a 9-digit organisation number valid under mod 11, MVA.
func noVATOK(v string) bool {
	return hasShape(v, shapeNOVAT) && mod11OK(v[2:11])
}

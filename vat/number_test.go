package vat

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// numberVectors are the example numbers of python-stdnum @ 006192e5
// (tests/test_eu_vat.doctest, tests/test_gb_vat.doctest and
// module docstrings), with the canonical form or the expected reason.
var numberVectors = []struct {
	in     string
	want   string // canonical number when valid
	reason string // NumberError.Reason when invalid
}{
	{in: "ATU13585627", want: "ATU13585627"},
	{in: "ATU46080404", want: "ATU46080404"},
	{in: "ATU 142 43 102", want: "ATU14243102"},
	{in: "ATU13585626", reason: InvalidChecksum},
	{in: "ATU 15169209", reason: InvalidChecksum},
	{in: "ATU 1515B209", reason: InvalidFormat},
	{in: "ATU 151592092", reason: InvalidLength},

	{in: "BE0428759497", want: "BE0428759497"},
	{in: "BE697449992", want: "BE0697449992"},
	{in: "BE (0)468.561.072", want: "BE0468561072"},
	{in: "BE431150351", reason: InvalidChecksum},
	{in: "BE 0406.139.583", reason: InvalidChecksum},
	{in: "BE 02A2.239.951", reason: InvalidFormat},

	{in: "BG175074752", want: "BG175074752"},
	{in: "BG 103873594", want: "BG103873594"},
	{in: "BG8032056031", want: "BG8032056031"},
	{in: "BG175074751", reason: InvalidChecksum},
	{in: "BG 131 172 009", reason: InvalidChecksum},
	{in: "BG 10X8735941", reason: InvalidFormat},

	{in: "CY10259033P", want: "CY10259033P"},
	{in: "CY 10246672X", want: "CY10246672X"},
	{in: "CY10259033Z", reason: InvalidChecksum},
	{in: "CY-12259033P", reason: InvalidComponent},
	{in: "CY-1225903322", reason: InvalidLength},

	{in: "CZ25123891", want: "CZ25123891"},
	{in: "CZ7103192745", want: "CZ7103192745"},
	{in: "CZ640903926", want: "CZ640903926"},
	{in: "CZ25123890", reason: InvalidChecksum},
	{in: "CZ 48207726", reason: InvalidChecksum},
	{in: "CZ 95123891", reason: InvalidComponent},

	{in: "DE136695976", want: "DE136695976"},
	{in: "DE812847601", want: "DE812847601"},
	{in: "DE136695978", reason: InvalidChecksum},
	{in: "DE 011125440", reason: InvalidFormat},

	{in: "DK13585628", want: "DK13585628"},
	{in: "DK36149213", want: "DK36149213"},
	{in: "DK13585627", reason: InvalidChecksum},
	{in: "DK 2565 2202", reason: InvalidChecksum},

	{in: "EE100594102", want: "EE100594102"},
	{in: "EE100931558", want: "EE100931558"},
	{in: "EE100594103", reason: InvalidChecksum},
	{in: "EE 100525487", reason: InvalidChecksum},

	{in: "EL094259216", want: "EL094259216"},
	{in: "EL 039868210", want: "EL039868210"},
	{in: "GR094259216", want: "EL094259216"}, // GR is accepted and written EL
	{in: "EL123456781", reason: InvalidChecksum},
	{in: "EL 094013834", reason: InvalidChecksum},

	{in: "ESB64717838", want: "ESB64717838"},
	{in: "ES54362315K", want: "ES54362315K"},
	{in: "ESX5253868R", want: "ESX5253868R"},
	{in: "ESM1234567L", want: "ESM1234567L"},
	{in: "ESB64717839", reason: InvalidChecksum},
	{in: "ES54362415K", reason: InvalidChecksum},
	{in: "ES B-583784312", reason: InvalidLength},

	{in: "FI20774740", want: "FI20774740"},
	{in: "FI 02459042", want: "FI02459042"},
	{in: "FI20774741", reason: InvalidChecksum},

	{in: "FR40303265045", want: "FR40303265045"},
	{in: "FRK7399859412", want: "FRK7399859412"},
	{in: "FR4Z123456782", want: "FR4Z123456782"},
	{in: "FR84323140391", reason: InvalidChecksum},
	{in: "FRIO334175221", reason: InvalidFormat},
	{in: "FR000076090", reason: InvalidLength},

	{in: "HR33392005961", want: "HR33392005961"},
	{in: "HR33392005962", reason: InvalidChecksum},

	{in: "HU12892312", want: "HU12892312"},
	{in: "HU10672101", want: "HU10672101"},
	{in: "HU12892313", reason: InvalidChecksum},

	{in: "IE6433435F", want: "IE6433435F"},
	{in: "IE6433435OA", want: "IE6433435OA"},
	{in: "IE8D79739I", want: "IE8D79739I"},
	{in: "IE6433435E", reason: InvalidChecksum},
	{in: "IE 4550C59S", reason: InvalidFormat},
	{in: "IE 069385V8", reason: InvalidFormat},

	{in: "IT00743110157", want: "IT00743110157"},
	{in: "IT02087050155", want: "IT02087050155"},
	{in: "IT00743110158", reason: InvalidChecksum},
	{in: "IT 00687129980", reason: InvalidComponent},

	{in: "LT119511515", want: "LT119511515"},
	{in: "LT100001919017", want: "LT100001919017"},
	{in: "LT100004801610", want: "LT100004801610"},
	{in: "LT100001919018", reason: InvalidChecksum},
	{in: "LT 100001509922", reason: InvalidComponent},

	{in: "LU15027442", want: "LU15027442"},
	{in: "LU 10059929", want: "LU10059929"},
	{in: "LU15027443", reason: InvalidChecksum},

	{in: "LV40003521600", want: "LV40003521600"},
	{in: "LV16117519997", want: "LV16117519997"},
	{in: "LV32867300679", want: "LV32867300679"},
	{in: "LV40003521601", reason: InvalidChecksum},
	{in: "LV16137519997", reason: InvalidComponent},
	{in: "LV 40003189715", reason: InvalidChecksum},

	{in: "MT11679112", want: "MT11679112"},
	{in: "MT 1039-6417", want: "MT10396417"},
	{in: "MT11679113", reason: InvalidChecksum},

	{in: "NL004495445B01", want: "NL004495445B01"},
	{in: "NL002455799B11", want: "NL002455799B11"},
	{in: "NL004095445B01", want: "NL004095445B01"}, // fails the 11-test, passes MOD 97-10
	{in: "NL123456789B90", reason: InvalidChecksum},
	{in: "NL 009122746B00", reason: InvalidFormat},
	{in: "NL006866304B021", reason: InvalidLength},

	{in: "PL8567346215", want: "PL8567346215"},
	{in: "PL5211355116", want: "PL5211355116"},
	{in: "PL8567346216", reason: InvalidChecksum},

	{in: "PT501964843", want: "PT501964843"},
	{in: "PT 500 019 720", want: "PT500019720"},
	{in: "PT501964842", reason: InvalidChecksum},

	{in: "RO18547290", want: "RO18547290"},
	{in: "RO 11358544", want: "RO11358544"},
	{in: "RO1630615123457", want: "RO1630615123457"},
	{in: "RO18547291", reason: InvalidChecksum},

	{in: "SE123456789701", want: "SE123456789701"},
	{in: "SE556043606401", want: "SE556043606401"},
	{in: "SE123456789101", reason: InvalidChecksum},
	{in: "SE 55643359201", reason: InvalidLength},

	{in: "SI50223054", want: "SI50223054"},
	{in: "SI 26808498", want: "SI26808498"},
	{in: "SI50223055", reason: InvalidChecksum},

	{in: "SK2022749619", want: "SK2022749619"},
	{in: "SK 1078449064", want: "SK1078449064"},
	{in: "SK2022749618", reason: InvalidChecksum},
	{in: "SK 012 274 96 19", reason: InvalidFormat},
	{in: "SK A078449064", reason: InvalidFormat},

	{in: "GB980780684", want: "GB980780684"},
	{in: "GB100190874", want: "GB100190874"},
	{in: "GB242338087388", want: "GB242338087388"},
	{in: "GBGD100", want: "GBGD100"},
	{in: "GBHA501", want: "GBHA501"},
	{in: "XI432525179", want: "XI432525179"},
	{in: "GBGD888810003", want: "GBGD888810003"}, // 100 mod 97 = 03
	{in: "GB802311781", reason: InvalidChecksum},
	{in: "GB001234567", reason: InvalidChecksum},
	{in: "GB9807806842", reason: InvalidLength},
	{in: "GBGD600", reason: InvalidComponent},
	{in: "GBHA201", reason: InvalidComponent},
	{in: "GBGD888810004", reason: InvalidChecksum},

	{in: "EU372022452", want: "EU372022452"},
	{in: "EU999022452", reason: InvalidComponent}, // 999 is no member state
	{in: "EU37202245", reason: InvalidLength},
	{in: "QQ124567", reason: InvalidPrefix},
	{in: "AT ATU 65033803", reason: InvalidFormat}, // double prefix
	{in: "13585627", reason: InvalidPrefix},
	{in: "", reason: InvalidPrefix},
	{in: "IM1234567890", reason: InvalidPrefix}, // IOSS numbers are not VAT numbers
}

func TestValidateNumber(t *testing.T) {
	for _, v := range numberVectors {
		n, err := ValidateNumber(v.in)
		if v.reason != "" {
			var ne *NumberError
			if !errors.As(err, &ne) {
				t.Errorf("ValidateNumber(%q) = %v, %v; want NumberError %s", v.in, n, err, v.reason)
				continue
			}
			if ne.Reason != v.reason || ne.Input != v.in {
				t.Errorf("ValidateNumber(%q): reason %q input %q, want %q", v.in, ne.Reason, ne.Input, v.reason)
			}
			if !errors.Is(err, ErrInvalidNumber) {
				t.Errorf("ValidateNumber(%q): error does not wrap ErrInvalidNumber", v.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("ValidateNumber(%q): %v, want %s", v.in, err, v.want)
			continue
		}
		if n.String() != v.want || n.Prefix != v.want[:2] || n.Body != v.want[2:] {
			t.Errorf("ValidateNumber(%q) = %+v, want %s", v.in, n, v.want)
		}
	}
}

// TestValidateNumberCanonicalIsStable: the canonical form of a valid number
// validates to itself.
func TestValidateNumberCanonicalIsStable(t *testing.T) {
	for _, v := range numberVectors {
		if v.want == "" {
			continue
		}
		n, err := ValidateNumber(v.want)
		if err != nil || n.String() != v.want {
			t.Errorf("ValidateNumber(%q) = %v, %v; want itself", v.want, n, err)
		}
	}
}

// TestValidateNumberSingleDigitErrors: changing any one checked digit of a
// valid number whose scheme detects every single substitution must be
// refused. These schemes are weighted sums modulo a prime with weights
// coprime to it, or ISO 7064 MOD 11,10. PT and EL are left out because their
// "mod 11 mod 10" folds two remainders onto one check digit, NL because a
// number is valid under either of two schemes (NL004095445B01, one digit
// off NL004495445B01, passes MOD 97-10).
func TestValidateNumberSingleDigitErrors(t *testing.T) {
	valid := []struct {
		number  string
		checked int // digits after the prefix covered by the check
	}{
		{"DE136695976", 9}, {"DK13585628", 8}, {"FI20774740", 8}, {"HR33392005961", 11},
		{"LU15027442", 8}, {"SI50223054", 8}, {"MT11679112", 8},
		{"PL8567346215", 10},
	}
	for _, v := range valid {
		s := v.number
		for i := 2; i < 2+v.checked; i++ {
			if s[i] < '0' || s[i] > '9' {
				continue
			}
			for d := byte('0'); d <= '9'; d++ {
				if d == s[i] {
					continue
				}
				m := s[:i] + string(d) + s[i+1:]
				if _, err := ValidateNumber(m); err == nil {
					t.Errorf("%s: one-digit change %s still validates", s, m)
				}
			}
		}
	}
}

func TestNormalizeNumber(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"atu 142 43 102", "ATU14243102"},
		{"BE (0)468.561.072", "BE0468561072"},
		{"gr-094/259:216", "EL094259216"},
		{"  nl 0044.95445 b01\t", "NL004495445B01"},
		{"DE\u00a0136\u2013695\u2014976", "DE136695976"}, // no-break space, en and em dash
		{"IE8D79739I", "IE8D79739I"},
		{"IE 1+23456X", "IE1+23456X"},
		{"EL094259216", "EL094259216"},
		{"élan", "éLAN"}, // only ASCII letters are upper-cased
		{"\xffAB", "\ufffdAB"},
		{"", ""},
	} {
		if got := NormalizeNumber(c.in); got != c.want {
			t.Errorf("NormalizeNumber(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNumberErrorMessage(t *testing.T) {
	_, err := ValidateNumber("DE136695978")
	if got, want := err.Error(), `vat: invalid VAT number "DE136695978": checksum`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	_, err = ValidateNumber(strings.Repeat("X", 100))
	if len(err.Error()) > 120 {
		t.Errorf("long input not shortened in message: %d bytes", len(err.Error()))
	}
}

func FuzzNormalizeNumber(f *testing.F) {
	for _, v := range numberVectors {
		f.Add(v.in)
	}
	f.Add("\xc2 \xa0")
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeNumber(s)
		if NormalizeNumber(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, NormalizeNumber(n))
		}
		if !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, n)
		}
		if strings.HasPrefix(n, "GR") {
			t.Fatalf("GR prefix left in %q", n)
		}
	})
}

func FuzzValidateNumber(f *testing.F) {
	for _, v := range numberVectors {
		f.Add(v.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ValidateNumber(s)
		if err != nil {
			var ne *NumberError
			if !errors.As(err, &ne) || ne.Input != s {
				t.Fatalf("ValidateNumber(%q): error %v is not a *NumberError for the input", s, err)
			}
			switch ne.Reason {
			case InvalidPrefix, InvalidFormat, InvalidLength, InvalidChecksum, InvalidComponent:
			default:
				t.Fatalf("ValidateNumber(%q): unknown reason %q", s, ne.Reason)
			}
			return
		}
		// A valid number's canonical form is valid, unchanged, and normal.
		again, err := ValidateNumber(n.String())
		if err != nil || again != n {
			t.Fatalf("ValidateNumber(%q) = %v; its canonical form gives %v, %v", s, n, again, err)
		}
		if NormalizeNumber(n.String()) != n.String() {
			t.Fatalf("canonical form %q is not normalised", n)
		}
	})
}

func BenchmarkValidateNumber(b *testing.B) {
	inputs := []string{"ATU13585627", "DE 136 695 976", "FRK7399859412", "NL002455799B11", "GB980780684", "ESX5253868R"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ValidateNumber(inputs[i%len(inputs)]); err != nil {
			b.Fatal(err)
		}
	}
}

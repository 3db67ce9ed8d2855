package vat

// Syntax and check-digit rules of VAT identification numbers, one function
// per prefix. Each rule is re-implemented from python-stdnum @ 006192e5
// (https://github.com/arthurdejong/python-stdnum/tree/006192e59be8ed6e08fd680256868a6c31eb2ba9,
// modules stdnum/<cc>/*.py) and tested against its example numbers
// (tests/test_eu_vat.doctest). The order of the tests inside each function
// decides which reason an invalid number gets; it follows stdnum so that
// the reasons match its vectors.

import "strings"

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func digit(s string, i int) int { return int(s[i] - '0') }

// atoi converts a string of at most 18 digits (callers check isDigits).
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// mod is the non-negative remainder (Python's %), which the published
// algorithms assume.
func mod(a, m int) int {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// weighted returns Σ w[i]·digit(s, i) over the shorter of the two.
func weighted(s string, w ...int) int {
	sum := 0
	for i := 0; i < len(w) && i < len(s); i++ {
		sum += w[i] * digit(s, i)
	}
	return sum
}

// luhnValid checks the Luhn (ISO/IEC 7812-1) digit of a digit string.
func luhnValid(s string) bool { return luhnSum(s)%10 == 0 }

func luhnSum(s string) int {
	sum := 0
	for i, n := len(s)-1, 0; i >= 0; i, n = i-1, n+1 {
		d := digit(s, i)
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum
}

// luhnCheckDigit returns the digit that completes s under Luhn.
func luhnCheckDigit(s string) int { return (10 - luhnSum(s+"0")%10) % 10 }

// mod1110Valid checks ISO 7064 MOD 11,10 (DE, HR).
func mod1110Valid(s string) bool {
	c := 5
	for i := 0; i < len(s); i++ {
		if c == 0 {
			c = 10
		}
		c = (c*2%11 + digit(s, i)) % 10
	}
	return c == 1
}

// mod9710Valid checks ISO 7064 MOD 97-10 over digits and letters (A=10 ...
// Z=35), as for IBANs (NL btw-id).
func mod9710Valid(s string) bool {
	r := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return r == 1
}

func daysIn(year, month int) int {
	switch month {
	case 1, 3, 5, 7, 8, 10, 12:
		return 31
	case 4, 6, 9, 11:
		return 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 0
}

func validDate(year, month, day int) bool {
	return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

// AT: "U" + 8 digits; Luhn-style sum S over digits 1–7 with the 2nd, 4th
// and 6th doubled (digit sum); check = (10 − (S+4) mod 10) mod 10.
func checkAT(b string) (string, string) {
	if len(b) == 0 || b[0] != 'U' || !isDigits(b[1:]) {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	d := b[1:]
	s := 0
	for i := 0; i < 7; i++ {
		v := digit(d, i)
		if i%2 == 1 {
			v *= 2
			v = v/10 + v%10
		}
		s += v
	}
	if (10-(s+4)%10)%10 != digit(d, 7) {
		return "", InvalidChecksum
	}
	return b, ""
}

// BE: 10 digits starting 0 or 1 (old 9-digit form gets a leading 0); the
// number of the first 8 digits plus the number of the last 2 ≡ 0 mod 97.
func checkBE(b string) (string, string) {
	if len(b) == 9 {
		b = "0" + b
	}
	if !isDigits(b) || strings.Trim(b, "0") == "" {
		return "", InvalidFormat
	}
	if len(b) != 10 {
		return "", InvalidLength
	}
	if b[0] != '0' && b[0] != '1' {
		return "", InvalidComponent
	}
	if (atoi(b[:8])+atoi(b[8:]))%97 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// BG: 9 digits (legal entities) or 10 (a valid EGN personal number, a valid
// PNF foreigner number, or the "other" weights).
func checkBG(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	switch len(b) {
	case 9:
		c := 0
		for i := 0; i < 8; i++ {
			c += (i + 1) * digit(b, i)
		}
		c %= 11
		if c == 10 {
			c = 0
			for i := 0; i < 8; i++ {
				c += (i + 3) * digit(b, i)
			}
			c %= 11
		}
		if c%10 != digit(b, 8) {
			return "", InvalidChecksum
		}
	case 10:
		other := mod(11-weighted(b, 4, 3, 2, 7, 6, 5, 4, 3, 2), 11)
		if !validEGN(b) && !validPNF(b) && other != digit(b, 9) {
			return "", InvalidChecksum
		}
	default:
		return "", InvalidLength
	}
	return b, ""
}

// validEGN checks a Bulgarian personal number: birth date YYMMDD (month +20
// for 1800s, +40 for 2000s) and check digit Σ w·d mod 11 mod 10.
func validEGN(b string) bool {
	year, month, day := 1900+atoi(b[0:2]), atoi(b[2:4]), atoi(b[4:6])
	switch {
	case month > 40:
		year, month = year+100, month-40
	case month > 20:
		year, month = year-100, month-20
	}
	if !validDate(year, month, day) {
		return false
	}
	return weighted(b, 2, 4, 8, 5, 10, 9, 7, 3, 6)%11%10 == digit(b, 9)
}

// validPNF checks a Bulgarian foreigner's number: Σ w·d mod 10.
func validPNF(b string) bool {
	return weighted(b, 21, 19, 17, 13, 11, 9, 7, 3, 1)%10 == digit(b, 9)
}

// CY: 8 digits + check letter, not starting 12; odd positions mapped
// 0→1 1→0 2→5 3→7 4→9 5→13 6→15 7→17 8→19 9→21, even positions as is,
// sum mod 26 → A–Z.
func checkCY(b string) (string, string) {
	if len(b) == 0 || !isDigits(b[:len(b)-1]) {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	if b[:2] == "12" {
		return "", InvalidComponent
	}
	odd := [10]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21}
	s := 0
	for i := 0; i < 8; i++ {
		if i%2 == 0 {
			s += odd[digit(b, i)]
		} else {
			s += digit(b, i)
		}
	}
	if b[8] != byte('A'+s%26) {
		return "", InvalidChecksum
	}
	return b, ""
}

// CZ: 8 digits (legal entities, not starting 9), 9 digits starting 6
// (special cases), or a 9/10-digit birth number (rodné číslo).
func checkCZ(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	switch {
	case len(b) == 8:
		if b[0] == '9' {
			return "", InvalidComponent
		}
		c := mod(11-weighted(b, 8, 7, 6, 5, 4, 3, 2), 11)
		if c == 0 {
			c = 1
		}
		if c%10 != digit(b, 7) {
			return "", InvalidChecksum
		}
	case len(b) == 9 && b[0] == '6':
		c := weighted(b[1:8], 8, 7, 6, 5, 4, 3, 2) % 11
		if mod(8-(10-c)%11, 10) != digit(b, 8) {
			return "", InvalidChecksum
		}
	case len(b) == 9 || len(b) == 10:
		if r := checkBirthNumber(b); r != "" {
			return "", r
		}
	default:
		return "", InvalidLength
	}
	return b, ""
}

// checkBirthNumber validates a Czech/Slovak birth number: YYMMDD (month +50
// for women, +20 when the serials overflowed, since 2004); 9 digits only
// before 1954; 10 digits: the first 9 mod 11 mod 10 = the last.
func checkBirthNumber(b string) string {
	year, month, day := 1900+atoi(b[0:2]), atoi(b[2:4])%50%20, atoi(b[4:6])
	if len(b) == 9 {
		if year >= 1980 {
			year -= 100
		}
		if year > 1953 {
			return InvalidLength
		}
	} else if year < 1954 {
		year += 100
	}
	if !validDate(year, month, day) {
		return InvalidComponent
	}
	if len(b) == 10 && atoi(b[:9])%11%10 != digit(b, 9) {
		return InvalidChecksum
	}
	return ""
}

// DE: 9 digits, no leading 0; ISO 7064 MOD 11,10.
func checkDE(b string) (string, string) {
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	if !mod1110Valid(b) {
		return "", InvalidChecksum
	}
	return b, ""
}

// DK: 8 digits, no leading 0; Σ w·d ≡ 0 mod 11, w = 2,7,6,5,4,3,2,1.
func checkDK(b string) (string, string) {
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	if weighted(b, 2, 7, 6, 5, 4, 3, 2, 1)%11 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// EE: 9 digits; Σ w·d ≡ 0 mod 10, w = 3,7,1,3,7,1,3,7,1.
func checkEE(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	if weighted(b, 3, 7, 1, 3, 7, 1, 3, 7, 1)%10 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// EL: 9 digits (old 8-digit form gets a leading 0); Σ dᵢ·2^(9−i) over the
// first 8, mod 11, mod 10 = the last.
func checkEL(b string) (string, string) {
	if len(b) == 8 {
		b = "0" + b
	}
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	s := 0
	for i := 0; i < 8; i++ {
		s = s*2 + digit(b, i)
	}
	if s*2%11%10 != digit(b, 8) {
		return "", InvalidChecksum
	}
	return b, ""
}

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// ES: 9 characters, digits in the middle. DNI (8 digits + letter), NIE
// (X/Y/Z + 7 digits + letter), K/L/M + 7 digits + DNI letter, or CIF
// (organisation letter + 7 digits + Luhn digit or its letter "JABCDEFGHI").
func checkES(b string) (string, string) {
	if len(b) < 2 || !isDigits(b[1:len(b)-1]) {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	first, last := b[0], b[8]
	switch {
	case first == 'K' || first == 'L' || first == 'M':
		if last != dniLetters[atoi(b[1:8])%23] {
			return "", InvalidChecksum
		}
	case first >= '0' && first <= '9':
		if last != dniLetters[atoi(b[:8])%23] {
			return "", InvalidChecksum
		}
	case first == 'X' || first == 'Y' || first == 'Z':
		n := int(first-'X')*10_000_000 + atoi(b[1:8])
		if last != dniLetters[n%23] {
			return "", InvalidChecksum
		}
	case strings.IndexByte("ABCDEFGHJNPQRSUVW", first) >= 0:
		c := luhnCheckDigit(b[1:8])
		if last != byte('0'+c) && last != "JABCDEFGHI"[c] {
			return "", InvalidChecksum
		}
	default:
		return "", InvalidFormat
	}
	return b, ""
}

// FI: 8 digits; Σ w·d ≡ 0 mod 11, w = 7,9,10,5,8,4,2,1.
func checkFI(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	if weighted(b, 7, 9, 10, 5, 8, 4, 2, 1)%11 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// frAlphabet is the alphabet of French check keys: digits and letters
// without I and O.
const frAlphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// FR: 2-character key + 9-digit SIREN. The SIREN passes Luhn unless digits
// 3–5 are 000 (Monaco). Numeric key = (SIREN·100 + 12) mod 97; a key with a
// letter uses the newer scheme of stdnum/fr/tva.py.
func checkFR(b string) (string, string) {
	for i := 0; i < 2 && i < len(b); i++ {
		if strings.IndexByte(frAlphabet, b[i]) < 0 {
			return "", InvalidFormat
		}
	}
	if len(b) < 3 || !isDigits(b[2:]) {
		return "", InvalidFormat
	}
	if len(b) != 11 {
		return "", InvalidLength
	}
	siren := b[2:]
	if siren[:3] != "000" && !luhnValid(siren) {
		return "", InvalidChecksum
	}
	if isDigits(b[:2]) {
		if atoi(b[:2]) != (atoi(siren)*100+12)%97 {
			return "", InvalidChecksum
		}
		return b, ""
	}
	k1, k2 := strings.IndexByte(frAlphabet, b[0]), strings.IndexByte(frAlphabet, b[1])
	var c int
	if b[0] >= '0' && b[0] <= '9' {
		c = k1*24 + k2 - 10
	} else {
		c = k1*34 + k2 - 100
	}
	if mod(atoi(siren)+1+c/11, 11) != mod(c, 11) {
		return "", InvalidChecksum
	}
	return b, ""
}

// HR: 11 digits (OIB); ISO 7064 MOD 11,10.
func checkHR(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 11 {
		return "", InvalidLength
	}
	if !mod1110Valid(b) {
		return "", InvalidChecksum
	}
	return b, ""
}

// HU: 8 digits; Σ w·d ≡ 0 mod 10, w = 9,7,3,1,9,7,3,1.
func checkHU(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	if weighted(b, 9, 7, 3, 1, 9, 7, 3, 1)%10 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

const ieLetters = "WABCDEFGHIJKLMNOPQRSTUV"

// ieCheck computes the Irish check letter of 7 digits plus an optional
// ninth character: Σ (8..2)·d + 9·index(ninth), mod 23.
func ieCheck(digits string, ninth byte) byte {
	s := weighted(digits, 8, 7, 6, 5, 4, 3, 2)
	if ninth != 0 {
		s += 9 * strings.IndexByte(ieLetters, ninth)
	}
	return ieLetters[s%23]
}

// IE: 7 digits + check letter + optional letter (A–W), or the old form
// digit + letter/'+'/'*' + 5 digits + check letter, checked as "0" + digits
// 3–7 + digit 1.
func checkIE(b string) (string, string) {
	if len(b) < 3 || !isDigits(b[:1]) || !isDigits(b[2:min(7, len(b))]) {
		return "", InvalidFormat
	}
	for i := 7; i < len(b); i++ {
		if b[i] < 'A' || b[i] > 'W' {
			return "", InvalidFormat
		}
	}
	if len(b) != 8 && len(b) != 9 {
		return "", InvalidLength
	}
	switch {
	case isDigits(b[:7]):
		var ninth byte
		if len(b) == 9 {
			ninth = b[8]
		}
		if b[7] != ieCheck(b[:7], ninth) {
			return "", InvalidChecksum
		}
	case len(b) == 8 && (isUpper(b[1]) || b[1] == '+' || b[1] == '*'):
		if b[7] != ieCheck("0"+b[2:7]+b[:1], 0) {
			return "", InvalidChecksum
		}
	default:
		return "", InvalidFormat
	}
	return b, ""
}

// IT: 11 digits, digits 1–7 not all 0, office code (digits 8–10) 001–100,
// 120, 121, 888 or 999; Luhn over all 11.
func checkIT(b string) (string, string) {
	if !isDigits(b) || strings.Trim(b[:min(7, len(b))], "0") == "" {
		return "", InvalidFormat
	}
	if len(b) != 11 {
		return "", InvalidLength
	}
	office := atoi(b[7:10])
	if !(office >= 1 && office <= 100 || office == 120 || office == 121 || office == 888 || office == 999) {
		return "", InvalidComponent
	}
	if !luhnValid(b) {
		return "", InvalidChecksum
	}
	return b, ""
}

// LT: 9 digits with 8th digit 1 (legal entities) or 12 digits with 11th
// digit 1; c = Σ (1 + i mod 9)·dᵢ mod 11, if 10 then Σ (1 + (i+2) mod 9)·dᵢ;
// check = c mod 11 mod 10.
func checkLT(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	switch len(b) {
	case 9:
		if b[7] != '1' {
			return "", InvalidComponent
		}
	case 12:
		if b[10] != '1' {
			return "", InvalidComponent
		}
	default:
		return "", InvalidLength
	}
	n := len(b) - 1
	c := 0
	for i := 0; i < n; i++ {
		c += (1 + i%9) * digit(b, i)
	}
	c %= 11
	if c == 10 {
		c = 0
		for i := 0; i < n; i++ {
			c += (1 + (i+2)%9) * digit(b, i)
		}
	}
	if c%11%10 != digit(b, n) {
		return "", InvalidChecksum
	}
	return b, ""
}

// LU: 8 digits; the first 6 mod 89 = the last 2.
func checkLU(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	if atoi(b[:6])%89 != atoi(b[6:]) {
		return "", InvalidChecksum
	}
	return b, ""
}

// LV: 11 digits. First digit > 3 (legal entity): Σ w·d ≡ 3 mod 11,
// w = 9,1,4,8,3,10,2,5,7,6,1. Otherwise a personal code (DDMMYY + century
// digit, or the undated "32..." form since 2017): check = (1 + Σ w·d) mod 11
// mod 10, w = 10,5,8,4,2,1,6,3,7,9.
func checkLV(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 11 {
		return "", InvalidLength
	}
	if b[0] > '3' {
		if weighted(b, 9, 1, 4, 8, 3, 10, 2, 5, 7, 6, 1)%11 != 3 {
			return "", InvalidChecksum
		}
		return b, ""
	}
	if b[:2] != "32" {
		year := 1800 + digit(b, 6)*100 + atoi(b[4:6])
		if !validDate(year, atoi(b[2:4]), atoi(b[0:2])) {
			return "", InvalidComponent
		}
	}
	if (1+weighted(b, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9))%11%10 != digit(b, 10) {
		return "", InvalidChecksum
	}
	return b, ""
}

// MT: 8 digits, no leading 0; Σ w·d ≡ 0 mod 37, w = 3,4,6,7,8,9,10,1.
func checkMT(b string) (string, string) {
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	if weighted(b, 3, 4, 6, 7, 8, 9, 10, 1)%37 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// NL: 9 digits (not all 0; shorter numbers are left-padded with zeros) +
// "B" + 2 digits (not 00). Valid when the 9 digits pass the 11-test
// (w = 9..2, −1) or, for the btw-id issued since 2020-01-01, "NL" + number
// passes ISO 7064 MOD 97-10.
func checkNL(b string) (string, string) {
	if len(b) < 3 {
		return "", InvalidFormat
	}
	if head := b[:len(b)-3]; len(head) < 9 {
		b = strings.Repeat("0", 9-len(head)) + b
	}
	if !isDigits(b[:9]) || strings.Trim(b[:9], "0") == "" {
		return "", InvalidFormat
	}
	if len(b) < 11 || !isDigits(b[10:]) || strings.Trim(b[10:], "0") == "" {
		return "", InvalidFormat
	}
	if len(b) != 12 {
		return "", InvalidLength
	}
	if b[9] != 'B' {
		return "", InvalidFormat
	}
	elevenTest := mod(weighted(b[:9], 9, 8, 7, 6, 5, 4, 3, 2, -1), 11) == 0
	if !elevenTest && !mod9710Valid("NL"+b) {
		return "", InvalidChecksum
	}
	return b, ""
}

// PL: 10 digits; Σ w·d ≡ 0 mod 11, w = 6,5,7,2,3,4,5,6,7,−1.
func checkPL(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 10 {
		return "", InvalidLength
	}
	if mod(weighted(b, 6, 5, 7, 2, 3, 4, 5, 6, 7, -1), 11) != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// PT: 9 digits, no leading 0; check = (11 − Σ (9..2)·d mod 11) mod 11 mod 10.
func checkPT(b string) (string, string) {
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	if len(b) != 9 {
		return "", InvalidLength
	}
	if mod(11-weighted(b, 9, 8, 7, 6, 5, 4, 3, 2), 11)%10 != digit(b, 8) {
		return "", InvalidChecksum
	}
	return b, ""
}

// RO: CUI/CIF of 2–10 digits (no leading 0): the body without its check
// digit, left-padded to 9, w = 7,5,3,2,1,7,5,3,2, check = 10·Σ mod 11 mod
// 10. A 13-digit personal number (CNP) is accepted too, as python-stdnum does.
func checkRO(b string) (string, string) {
	if len(b) == 13 {
		if r := checkCNP(b); r != "" {
			return "", r
		}
		return b, ""
	}
	if len(b) < 2 || len(b) > 10 {
		return "", InvalidLength
	}
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	body := strings.Repeat("0", 10-len(b)) + b[:len(b)-1]
	if 10*weighted(body, 7, 5, 3, 2, 1, 7, 5, 3, 2)%11%10 != digit(b, len(b)-1) {
		return "", InvalidChecksum
	}
	return b, ""
}

// roCounties are the county codes (digits 8–9) of a Romanian CNP: 01–46
// counties and Bucharest sectors, 47–48 former sectors, 51 Călărași,
// 52 Giurgiu, 70 any, 80–83 foreign residents (python-stdnum ro/cnp.py).
var roCounties = map[string]bool{
	"01": true, "02": true, "03": true, "04": true, "05": true, "06": true, "07": true, "08": true, "09": true, "10": true,
	"11": true, "12": true, "13": true, "14": true, "15": true, "16": true, "17": true, "18": true, "19": true, "20": true,
	"21": true, "22": true, "23": true, "24": true, "25": true, "26": true, "27": true, "28": true, "29": true, "30": true,
	"31": true, "32": true, "33": true, "34": true, "35": true, "36": true, "37": true, "38": true, "39": true, "40": true,
	"41": true, "42": true, "43": true, "44": true, "45": true, "46": true, "47": true, "48": true, "51": true, "52": true,
	"70": true, "80": true, "81": true, "82": true, "83": true,
}

// checkCNP validates a Romanian personal number: sex/century digit, birth
// date YYMMDD, county, check digit Σ w·d mod 11 (10 → 1).
func checkCNP(b string) string {
	if !isDigits(b) {
		return InvalidFormat
	}
	if b[0] == '0' {
		return InvalidComponent
	}
	century := 1900
	switch b[0] {
	case '3', '4':
		century = 1800
	case '5', '6':
		century = 2000
	}
	if !validDate(century+atoi(b[1:3]), atoi(b[3:5]), atoi(b[5:7])) {
		return InvalidComponent
	}
	if !roCounties[b[7:9]] {
		return InvalidComponent
	}
	c := weighted(b, 2, 7, 9, 1, 4, 6, 3, 5, 8, 2, 7, 9) % 11
	if c == 10 {
		c = 1
	}
	if c != digit(b, 12) {
		return InvalidChecksum
	}
	return ""
}

// SE: 10-digit organisation number + "01"; the organisation number passes Luhn.
func checkSE(b string) (string, string) {
	if !isDigits(b) || !strings.HasSuffix(b, "01") {
		return "", InvalidFormat
	}
	org := b[:len(b)-2]
	if org == "" {
		return "", InvalidFormat
	}
	if len(org) != 10 {
		return "", InvalidLength
	}
	if !luhnValid(org) {
		return "", InvalidChecksum
	}
	return b, ""
}

// SI: 8 digits, no leading 0; c = 11 − (Σ (8..2)·d mod 11), 10 → 0, 11 never valid.
func checkSI(b string) (string, string) {
	if !isDigits(b) || b[0] == '0' {
		return "", InvalidFormat
	}
	if len(b) != 8 {
		return "", InvalidLength
	}
	c := 11 - weighted(b, 8, 7, 6, 5, 4, 3, 2)%11
	if c == 10 {
		c = 0
	}
	if c != digit(b, 7) {
		return "", InvalidChecksum
	}
	return b, ""
}

// SK: 10 digits; a valid birth number, or: first digit not 0, third digit
// in {2,3,4,7,8,9}, whole number ≡ 0 mod 11.
func checkSK(b string) (string, string) {
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if len(b) != 10 {
		return "", InvalidLength
	}
	if checkBirthNumber(b) == "" {
		return b, ""
	}
	if b[0] == '0' || strings.IndexByte("234789", b[2]) < 0 {
		return "", InvalidFormat
	}
	if atoi(b)%11 != 0 {
		return "", InvalidChecksum
	}
	return b, ""
}

// GB and XI (stdnum/gb/vat.py): 9 digits, or 12 for branch traders (the
// last 3 are the branch); weights 8,7,6,5,4,3,2 on digits 1–7 plus the
// number formed by digits 8–9, mod 97: 0, or 42 or 55 when the first three
// digits are ≥ 100 (the "9755" series). GD + 3 digits < 500 (government
// departments), HA + 3 digits ≥ 500 (health authorities), and their
// 11-character EU forms GD8888nnnxx / HA8888nnnxx with nnn mod 97 = xx.
func checkGB(b string) (string, string) {
	switch {
	case len(b) == 5:
		if !isDigits(b[2:]) {
			return "", InvalidFormat
		}
		if !gbGovernment(b[:2], atoi(b[2:])) {
			return "", InvalidComponent
		}
	case len(b) == 11 && (b[:6] == "GD8888" || b[:6] == "HA8888"):
		if !isDigits(b[6:]) {
			return "", InvalidFormat
		}
		n := atoi(b[6:9])
		if !gbGovernment(b[:2], n) {
			return "", InvalidComponent
		}
		if n%97 != atoi(b[9:]) {
			return "", InvalidChecksum
		}
	case len(b) == 9 || len(b) == 12:
		if !isDigits(b) {
			return "", InvalidFormat
		}
		s := weighted(b, 8, 7, 6, 5, 4, 3, 2, 10, 1) % 97
		if atoi(b[:3]) >= 100 {
			if s != 0 && s != 42 && s != 55 {
				return "", InvalidChecksum
			}
		} else if s != 0 {
			return "", InvalidChecksum
		}
	default:
		return "", InvalidLength
	}
	return b, ""
}

func gbGovernment(kind string, n int) bool {
	return kind == "GD" && n < 500 || kind == "HA" && n >= 500
}

// euOSSStates are the ISO 3166-1 numeric codes that open a non-Union OSS
// number: the member state of identification (stdnum/eu/oss.py), plus
// 900 for Northern Ireland.
var euOSSStates = map[string]bool{
	"040": true, "056": true, "100": true, "191": true, "196": true, "203": true, "208": true,
	"233": true, "246": true, "250": true, "276": true, "300": true, "348": true, "372": true,
	"380": true, "428": true, "440": true, "442": true, "470": true, "528": true, "616": true,
	"620": true, "642": true, "703": true, "705": true, "724": true, "752": true, "900": true,
}

// EU: 9 digits whose first three name the member state of identification;
// no public check digit exists.
func checkEU(b string) (string, string) {
	if len(b) != 9 {
		return "", InvalidLength
	}
	if !isDigits(b) {
		return "", InvalidFormat
	}
	if !euOSSStates[b[:3]] {
		return "", InvalidComponent
	}
	return b, ""
}

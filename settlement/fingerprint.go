package settlement

import (
	"crypto/sha256"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/fiscal402/fiscal402/vat"
)

// Fingerprint identifies the request body of a settlement for its
// Idempotency-Key: its normalised fields. The same request sent again,
// whatever its spelling ("1.5" or "1.50", member order), has the same
// fingerprint; any change of meaning does not.
//
// The hashed bytes are the JSON encoding/json writes for a struct of the
// fields named A, T, Ts, ... (stored fingerprints were made that way);
// appendFingerprintJSON writes them without reflection, and
// TestFingerprintJSONMatchesEncodingJSON and FuzzFingerprintJSON hold it
// to json.Marshal.
func (p Payment) Fingerprint() []byte {
	var buf [512]byte
	fp := sha256.Sum256(appendFingerprintJSON(buf[:0], p.fingerprintFields()))
	b := p.Buyer
	if len(b.Evidence) == 0 && len(b.Conditions) == 0 && b.Provider == nil {
		return fp[:] // as before these facts existed: stored keys keep matching
	}
	return hash(struct {
		F []byte
		E []vat.Evidence
		C []string
		P *vat.Provider
	}{fp[:], b.Evidence, b.Conditions, b.Provider})
}

// fingerprintNames are the members of the first hashed object, in order.
var fingerprintNames = [...]string{"A", "T", "Ts", "P", "R", "N", "As", "Sc", "Pr", "BC", "BP", "BV", "BN", "K", "D"}

// fingerprintFields are the values of the members fingerprintNames names.
func (p *Payment) fingerprintFields() [len(fingerprintNames)]string {
	return [...]string{p.Amount.String(), p.TxHash, p.Timestamp.Format(time.RFC3339Nano), p.PayerWallet, p.ReceiverWallet, p.Network,
		p.Asset, p.Scheme, p.Protocol, p.Buyer.Country, p.Buyer.PostalCode, p.Buyer.VATNumber, p.Buyer.Name, p.Buyer.SupplyKind, p.Buyer.Description}
}

// appendFingerprintJSON appends what json.Marshal writes for a struct
// whose string fields are fingerprintNames with the values v.
func appendFingerprintJSON(b []byte, v [len(fingerprintNames)]string) []byte {
	for i, name := range fingerprintNames {
		if i == 0 {
			b = append(b, `{"`...)
		} else {
			b = append(b, `,"`...)
		}
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendJSONString(b, v[i])
	}
	return append(b, '}')
}

// jsonSafe marks the bytes appendJSONString copies as they are: ASCII
// from space to DEL but '"', '\\', '<', '>' and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as encoding/json writes a string (with HTML
// escaping, its default): the safe bytes as they are; '"' and '\\' after
// a backslash; \b, \f, \n, \r and \t by name; other control characters
// and '<', '>', '&' as \u00XX; valid UTF-8 as it is but U+2028 and U+2029
// (\u2028, \u2029); each byte of invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// hash is the SHA-256 of v's JSON.
func hash(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

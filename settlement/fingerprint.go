package settlement

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/fiscal402/fiscal402/internal/jsonenc"
	"github.com/fiscal402/fiscal402/invoicelaw"
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
	if len(b.Evidence) == 0 && len(b.Conditions) == 0 && b.Provider == nil && b.Address == nil {
		return fp[:] // as before these facts existed: stored keys keep matching
	}
	// The customer's postal address (consumerAddress) changes what is
	// asked: a business sale's invoice states it (Art. 226(5) Directive
	// 2006/112/EC), and its postal code places the supply. Without one the
	// hash is the one made before the address was taken (A omitted), so
	// stored keys keep matching; a key stored with an address before the
	// address counted answers a retry of it with 409.
	return hash(struct {
		F []byte
		E []vat.Evidence
		C []string
		P *vat.Provider
		A *invoicelaw.Address `json:",omitempty"`
	}{fp[:], b.Evidence, b.Conditions, b.Provider, b.Address})
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
		b = jsonenc.String(b, v[i])
	}
	return append(b, '}')
}

// hash is the SHA-256 of v's JSON.
func hash(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

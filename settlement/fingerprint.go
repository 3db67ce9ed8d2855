package settlement

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// Fingerprint identifies the request body of a settlement for its
// Idempotency-Key: its normalised fields. The same request sent again,
// whatever its spelling ("1.5" or "1.50", member order), has the same
// fingerprint; any change of meaning does not.
func (p Payment) Fingerprint() []byte {
	fp := hash(struct {
		A, T, Ts, P, R, N, As, Sc, Pr, BC, BP, BV, BN, K, D string
	}{p.Amount.String(), p.TxHash, p.Timestamp.Format(time.RFC3339Nano), p.PayerWallet, p.ReceiverWallet, p.Network,
		p.Asset, p.Scheme, p.Protocol, p.Buyer.Country, p.Buyer.PostalCode, p.Buyer.VATNumber, p.Buyer.Name, p.Buyer.SupplyKind, p.Buyer.Description})
	b := p.Buyer
	if len(b.Evidence) == 0 && len(b.Conditions) == 0 && b.Provider == nil {
		return fp // as before these facts existed: stored keys keep matching
	}
	return hash(struct {
		F []byte
		E []vat.Evidence
		C []string
		P *vat.Provider
	}{fp, b.Evidence, b.Conditions, b.Provider})
}

// hash is the SHA-256 of v's JSON.
func hash(v any) []byte {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return h[:]
}

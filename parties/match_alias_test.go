package parties

import (
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestMatchAccountSellerReadsGreeceAsOneCountry: EL is Greece's code in
// VAT matters (Art. 215 Directive 2006/112/EC) and GR its ISO 3166-1 code;
// the service accepts either for a seller's country and establishments,
// and the engine reads both as Greece. A body naming the account's own
// seller with the other spelling is the same seller (its profile decides,
// its sales are the account's), not a stranger, and the same further
// establishments are no contradiction of the profile.
func TestMatchAccountSellerReadsGreeceAsOneCountry(t *testing.T) {
	for _, c := range []struct{ body, account string }{{"GR", "EL"}, {"EL", "GR"}, {"GR", "GR"}} {
		acc := fiscal.Account{ID: "acc", Seller: fiscal.Seller{LegalName: "Athens Digital", Country: c.account, OtherEstablishments: []string{c.account}}}
		for _, other := range [][]string{nil, {c.body}} {
			body, err := ParseSeller("/seller", Seller{LegalName: "Athens  digital", Country: c.body, OtherEstablishments: other}, true)
			if err != nil {
				t.Fatal(err)
			}
			m, ok, err := MatchAccountSeller("/seller", body, acc, nil)
			if err != nil || !ok || !m.IsAccount {
				t.Errorf("body %s %v, account %s %v: matched %v, IsAccount %v, error %v; want the account's seller", c.body, other, c.account, acc.Seller.OtherEstablishments, ok, m.IsAccount, err)
			}
		}
	}
	// XI (Northern Ireland) and GB stay different answers: a seller there
	// is one the account does not name.
	acc := fiscal.Account{ID: "acc", Seller: fiscal.Seller{LegalName: "Belfast Digital", Country: "GB"}}
	body, err := ParseSeller("/seller", Seller{LegalName: "Belfast Digital", Country: "XI"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := MatchAccountSeller("/seller", body, acc, nil); ok || err != nil {
		t.Errorf("body XI, account GB: matched %v (%v); want a different seller", ok, err)
	}
}

package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestAccountSellerNumberWithoutPrefix: the account's own seller named
// with its VAT number written without the country prefix (IE1234567T as
// "1234567T", or spaced), the way a number is often written at home, is
// the same seller: the prefix is the ISO code of the member state that
// issued the number (Art. 215 Directive 2006/112/EC), here the seller's
// country. The event is the account's sale with its receipt, not another
// seller's event without one. A different number is still another seller.
func TestAccountSellerNumberWithoutPrefix(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	body := fiscaltest.IrishSeller.VATNumber[2:]
	for i, c := range []struct {
		number  string
		account bool
	}{
		{fiscaltest.IrishSeller.VATNumber, true},
		{body, true},
		{body[:3] + " " + body[3:], true},
		{"9999999W", false},
	} {
		req := request(820+i, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
		req.Seller.VATNumber = c.number
		res, err := events.Record(ctx, fiscaltest.AccountID(0), req, "")
		if err != nil {
			t.Fatalf("%q: %v", c.number, err)
		}
		if got := res.Event.Seller.AccountSeller; got != c.account || got != (res.Event.Receipt != nil) {
			t.Errorf("%q: account seller %t, receipt %t; want %t", c.number, got, res.Event.Receipt != nil, c.account)
		}
	}
}

package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestAccountEstablishmentsInAnotherOrder: the account's own seller named
// with its fixed establishments (Art. 59c(1)(a) Directive 2006/112/EC: the
// member states where it is established) listed in another order, or one
// listed twice, or under another code of the same state (EL for GR), states
// the same facts as its profile: the event is the account's sale, not a
// 400 "contradicts the account's seller profile". A list naming another
// state still contradicts it.
func TestAccountEstablishmentsInAnotherOrder(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.OtherEstablishments = []string{"FR", "GR"}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	for i, list := range [][]string{{"FR", "GR"}, {"GR", "FR"}, {"EL", "FR"}, {"FR", "GR", "FR"}} {
		req := request(780+i, "11.90", seller.LegalName, "IE", "DE")
		req.Seller.OtherEstablishments = list
		res, err := events.Record(ctx, fiscaltest.AccountID(0), req, "")
		if err != nil {
			t.Errorf("%v: %v", list, err)
			continue
		}
		if !res.Event.Seller.AccountSeller {
			t.Errorf("%v: not the account's seller", list)
		}
	}
	req := request(790, "11.90", seller.LegalName, "IE", "DE")
	req.Seller.OtherEstablishments = []string{"FR", "DE"}
	if _, err := events.Record(ctx, fiscaltest.AccountID(0), req, ""); err == nil {
		t.Errorf("[FR DE] against the profile's [FR GR]: recorded, want 400")
	} else if f := fiscaltest.Code(err); f != "BAD_REQUEST" {
		t.Errorf("[FR DE]: %v", err)
	}
}

package rates_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSettlementRateRetryKeepsItsProfile: a settlement of the account
// waits for its ECB rate; before the rate is published the operator
// changes the seller's profile (renamed, its Union OSS registration,
// Art. 369a-369k Directive 2006/112/EC, stated from 1 May only). The
// revision made once the rate is out decides the April sale, whose VAT
// became chargeable when it was supplied (Art. 63), under the profile the
// settlement was recorded with, as a fiscal event's does. A review found
// the later profile deciding it (seller_not_registered, no invoice) and
// naming the renamed seller.
func TestSettlementRateRetryKeepsItsProfile(t *testing.T) {
	ecb := newECBServer(t)
	seller := fiscaltest.IrishOSSSeller()
	e, svc := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC), ecb, seller)
	defer e.Close()
	ctx := context.Background()
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("recorded %s: the rate was already there", res.Record.ReviewStatus)
	}
	later := seller
	later.LegalName, later.LegalID = "Renamed Digital Holdings Ltd", "IE-CRO-999999"
	later.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-05-01"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(later)); err != nil {
		t.Fatal(err)
	}
	ecb.publish("2026-04-14", "1.172513")
	waitFor(t, "the 14 April publication", func() bool { return svc.Report().Newest == "2026-04-14" })
	if _, err := rates.Retry(ctx, e); err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	r, _, err := b.Record(ctx, res.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Revision != 2 || r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil {
		var codes []string
		for _, x := range r.ReviewReasons {
			codes = append(codes, x.Code)
		}
		t.Fatalf("after publication: revision %d %s %v invoice %v; want the sale decided under the profile it was recorded with",
			r.Revision, r.ReviewStatus, codes, r.Invoice)
	}
	xml, _, err := b.Invoice(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(xml), seller.LegalName) || strings.Contains(string(xml), later.LegalName) {
		t.Errorf("the revision's invoice does not name the seller the settlement was recorded with")
	}
}

package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestVATNumberFailingCheckDigitsSaysSo: a buyer's VAT number whose check
// digit is wrong is refused by the syntax rules before any registry is asked
// (vies.Service with vat.Syntax, as the server wires it). The record treats
// the buyer as a consumer (Art. 18(2) Implementing Regulation 282/2011) and
// its reason must say why: the number fails its check-digit test. It must
// not claim that a registry answered, since none was asked: the record is
// the proof of what was checked (Art. 18(1)(a) ibid.).
func TestVATNumberFailingCheckDigitsSaysSo(t *testing.T) {
	svc, err := vies.New(vies.Config{Mode: vies.ModeOff, Service: vies.ServiceConfig{Syntax: vat.Syntax}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	cfg.VIES = svc
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	for i, number := range []string{"DE136695978", "ATU13585626", "FR84323140391"} {
		req := fiscaltest.Request(i+1, "11.90", number[:2], "2026-04-10T14:30:00Z")
		req.ConsumerVATNumber = number
		res, err := b.Settle(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if reg := r.Buyer.Registry; reg == nil || reg.Status != vies.StatusInvalid || reg.Registry != "" {
			t.Fatalf("%s: registry proof %+v, want invalid with no registry asked", number, r.Buyer.Registry)
		}
		if r.Classification.BuyerTreatment != vat.TreatmentB2C {
			t.Errorf("%s: buyer treatment %q, want B2C", number, r.Classification.BuyerTreatment)
		}
		var detail string
		for _, reason := range r.Classification.Reasons {
			if reason.Code == vat.ReasonVATNumberInvalid {
				detail = reason.Detail
			}
		}
		if !strings.Contains(detail, "check digit") || strings.Contains(detail, "answered") {
			t.Errorf("%s: reason %q; want it to name the failed check-digit test, not a registry's answer", number, detail)
		}
	}
}

// TestForeignNumberDomesticSaleWaitsForRegistry: an Irish customer of an
// Irish seller gives a German VAT number while VIES is down. Confirmed,
// the number moves the place of supply to Germany (Art. 44 Directive
// 2006/112/EC); refuted, the sale is an Irish consumer's (Art. 18(2)
// Implementing Regulation 282/2011). The sale is held, and re-checked:
// once VIES finds the number invalid, it is decided as domestic.
func TestForeignNumberDomesticSaleWaitsForRegistry(t *testing.T) {
	const number = "DE136695976"
	fake := vies.NewFake()
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_UNAVAILABLE"})
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	cfg.Clock = func() time.Time { return now }
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(1, "11.90", "IE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = number
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("VIES down: %s %s %s %v; want %s", r.ReviewStatus, r.Classification.Regime, r.Classification.Category, r.ReviewReasons, fiscal.StatusPendingReview)
	}
	if q, err := e.Queues(); err != nil || q.Rechecks != 1 {
		t.Fatalf("re-checks queued: %+v %v; want 1", q, err)
	}
	now = now.Add(time.Hour) // past the re-check's first delay
	fake.Set(number, vies.Result{Status: vies.StatusInvalid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: vies.FaultInvalid, RequestDate: now})
	if _, err := e.RecheckNow(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err := b.Record(ctx, res.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeDomestic || r.Classification.TaxingCountry != "IE" {
		t.Fatalf("after VIES found it invalid: %s %s %s %v", r.ReviewStatus, r.Classification.Regime, r.Classification.TaxingCountry, r.ReviewReasons)
	}
}

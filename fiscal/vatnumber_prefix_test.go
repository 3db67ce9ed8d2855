package fiscal_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestPrefixlessBuyerNumberAskedQualified: a business customer in Germany
// gives its VAT number without the prefix DE. The registry must be asked
// about the number read under the buyer's country (vat.QualifyNumber), and
// the sale decided as the same sale with the prefix given: a review found
// the engine asking VIES about "136695976", which the syntax check (as the
// server wires vies.Service) refuses before any registry, so the customer
// became a consumer. The record states the number as the registry checked
// it, with the note that its prefix was supplied; a retry of the request
// with its Idempotency-Key is still the same request.
func TestPrefixlessBuyerNumberAskedQualified(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	fake := vies.NewFake()
	for _, n := range []string{"DE136695976", "ESB64717838", "EL094259216"} {
		fake.Set(n, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: n[:2], Number: n[2:],
			RequestDate: now, RequestIdentifier: "WAPI" + n, Name: "Kunde " + n, Address: "Hauptstr. 1, 10115 Berlin"})
	}
	// The syntax check before the fake, as the server wires the registry.
	svc := checker(func(ctx context.Context, number string) vies.Result {
		if _, err := vat.ValidateNumber(number); err != nil {
			return vies.Result{Status: vies.StatusInvalid, Number: number, RequestDate: now, Fault: vies.FaultSyntax, Detail: err.Error()}
		}
		return fake.Check(ctx, number)
	})
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = svc
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	for i, c := range []struct{ country, given, number string }{
		{"DE", "136 695 976", "DE136695976"},
		{"ES", "B-64717838", "ESB64717838"},
		{"GR", "094259216", "EL094259216"},
	} {
		settle := func(n int, number, key string) *fiscal.SettleResult {
			t.Helper()
			req := fiscaltest.Request(n, "11.90", c.country, "2026-04-10T14:30:00Z")
			req.ConsumerVATNumber = number
			res, err := b.Settle(ctx, req, key)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		with := settle(10*i+1, c.number, "").Record
		before := fake.Calls(c.number)
		key := "prefixless-" + c.country
		res := settle(10*i+2, c.given, key)
		r := res.Record
		if got := fake.Calls(c.number) - before; got != 1 {
			t.Errorf("%s %q: the registry was asked %d times about %s; want once", c.country, c.given, got, c.number)
		}
		if r.Classification.BuyerTreatment != vat.TreatmentB2B || r.Classification.Regime != vat.RegimeReverseChargeB2B ||
			r.ReviewStatus != with.ReviewStatus || !slices.Equal(codes(r.ReviewReasons), codes(with.ReviewReasons)) {
			t.Errorf("%s %q: %s %s %s %v; with the prefix %s %s %s %v", c.country, c.given,
				r.ReviewStatus, r.Classification.Regime, r.Classification.BuyerTreatment, r.ReviewReasons,
				with.ReviewStatus, with.Classification.Regime, with.Classification.BuyerTreatment, with.ReviewReasons)
		}
		if r.Buyer.VATNumber != c.number || r.Buyer.Registry == nil || r.Buyer.Registry.CountryCode+r.Buyer.Registry.Number != c.number {
			t.Errorf("%s %q: record states %q, registry %+v; want %s", c.country, c.given, r.Buyer.VATNumber, r.Buyer.Registry, c.number)
		}
		if !slices.Contains(codes(r.Classification.Reasons), vat.ReasonVATNumberPrefixSupplied) {
			t.Errorf("%s %q: reasons %v; want the note %s", c.country, c.given, r.Classification.Reasons, vat.ReasonVATNumberPrefixSupplied)
		}
		again := settle(10*i+2, c.given, key)
		if again.Outcome != fiscal.Replayed || again.Record.ID != r.ID {
			t.Errorf("%s %q: retry with its key: %v %s; want a replay of %s", c.country, c.given, again.Outcome, again.Record.ID, r.ID)
		}
	}
	// No country: nothing is supplied and no registry is asked.
	req := fiscaltest.Request(99, "11.90", "", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = "136695976"
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(codes(r.ReviewReasons), vat.ReasonBuyerCountryMissing) ||
		r.Buyer.VATNumber != "136695976" || strings.HasPrefix(r.Buyer.Registry.Detail, "vies: fake") {
		t.Errorf("no country: %s %v, number %q, registry %+v; want review for the country, the number as given, no registry asked", r.ReviewStatus, r.ReviewReasons, r.Buyer.VATNumber, r.Buyer.Registry)
	}
}

type checker func(ctx context.Context, number string) vies.Result

func (f checker) Check(ctx context.Context, number string) vies.Result { return f(ctx, number) }

func codes(rs []vat.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

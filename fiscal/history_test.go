package fiscal_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// Issue 16 end to end: every decision that depends on the seller's own
// history, the local day of the supply and the seller's registrations,
// made through Books.Settle on a real bbolt ledger.

func reasons(r *fiscal.Record) []string {
	var out []string
	for _, x := range r.ReviewReasons {
		out = append(out, x.Code)
	}
	return out
}

func reasonDetail(r *fiscal.Record, code string) string {
	for _, x := range r.ReviewReasons {
		if x.Code == code {
			return x.Detail
		}
	}
	return ""
}

// thresholdLine is one row of the threshold sequence for the log.
func thresholdLine(r *fiscal.Record) string {
	c := r.Classification
	th := c.Threshold
	if th == nil {
		return fmt.Sprintf("%s %s %s no threshold section", r.Settlement.Timestamp, c.TaxingCountry, c.Regime)
	}
	after := "-"
	if th.TotalAfter != nil {
		after = th.TotalAfter.StringFixed(2)
	}
	return fmt.Sprintf("%s day=%s year=%d taxed in %s (%s) rule=%s before=%s after=%s crossed=%v",
		r.Settlement.Timestamp, c.SupplyDate, th.Year, c.TaxingCountry, c.Regime, th.Rule, th.TotalBefore.StringFixed(2), after, th.Crossed)
}

// TestThresholdDecemberThenJanuary: an Irish seller's three 6,000 USDC
// sales to German consumers cross EUR 10,000 with the third, on 31
// December 2025 at 23:30 UTC (still 31 December in Dublin, so 2025's
// total, although in Berlin, where it is taxed, it is 1 January): that sale and every later one in
// 2025 is taxed in Germany, and so is every sale of 2026 (Art. 59c(1)(c):
// the preceding calendar year was exceeded), although 2026's own total
// starts at zero.
func TestThresholdDecemberThenJanuary(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	b := fiscaltest.Books(t, e, 0)
	steps := []struct {
		at, amount, want, rule string
		crossed                bool
	}{
		{"2025-12-10T12:00:00Z", "6000", "IE", vat.ThresholdWithin, false},
		{"2025-12-19T12:00:00Z", "6000", "IE", vat.ThresholdWithin, false},
		{"2025-12-31T23:30:00Z", "6000", "DE", vat.ThresholdCrossed, true},
		{"2025-12-31T23:50:00Z", "100", "DE", vat.ThresholdCurrentYear, false},
		{"2026-01-01T00:30:00Z", "100", "DE", vat.ThresholdPreviousYear, false},
		{"2026-03-02T09:00:00Z", "100", "DE", vat.ThresholdPreviousYear, false},
	}
	for i, s := range steps {
		r := settleOK(t, b, fiscaltest.Request(i, s.amount, "DE", s.at))
		c := r.Classification
		t.Log(thresholdLine(r))
		if r.ReviewStatus != fiscal.StatusProcessed || c.TaxingCountry != s.want || c.Threshold == nil || c.Threshold.Rule != s.rule || c.Threshold.Crossed != s.crossed {
			t.Errorf("sale %d at %s: %s %v, want taxed in %s by %s", i+1, s.at, r.ReviewStatus, reasons(r), s.want, s.rule)
		}
	}
	totals, err := b.Totals(context.Background())
	if err != nil || len(totals) != 2 || totals[0].Year != 2025 || !totals[0].Exceeded || totals[1].Year != 2026 || totals[1].Exceeded {
		t.Fatalf("totals %+v %v", totals, err)
	}
	if evs := thresholdEvents(t, e); len(evs) != 1 {
		t.Fatalf("%d threshold events, want 1 (2025's crossing)", len(evs))
	}
}

// TestOpeningFigureAlreadyOver: sales made before onboarding are an
// opening figure; one already over EUR 10,000 for the current year taxes
// the first recorded sale at destination, and so does overThreshold: true.
// Neither emits a crossing (no recorded supply crossed).
func TestOpeningFigureAlreadyOver(t *testing.T) {
	opening := smallIrishSeller
	opening.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "10000.01"}}
	stated := smallIrishSeller
	stated.OverThreshold = true
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), opening, stated))
	for i, rule := range []string{vat.ThresholdCurrentYear, vat.ThresholdStatedOver} {
		b := fiscaltest.Books(t, e, i)
		r := settleOK(t, b, fiscaltest.Request(i, "10", "DE", "2026-03-02T09:00:00Z"))
		t.Log(thresholdLine(r))
		if c := r.Classification; r.ReviewStatus != fiscal.StatusProcessed || c.TaxingCountry != "DE" || c.Threshold == nil || c.Threshold.Rule != rule || c.Threshold.Crossed {
			t.Errorf("account %d: %s %v taxed in %s %+v, want DE by %s", i, r.ReviewStatus, reasons(r), c.TaxingCountry, c.Threshold, rule)
		}
	}
	if evs := thresholdEvents(t, e); len(evs) != 0 {
		t.Errorf("threshold events %+v, want none", evs)
	}
	totals, _ := fiscaltest.Books(t, e, 0).Totals(context.Background())
	if len(totals) != 1 || totals[0].OpeningEUR != "10000.01" || !totals[0].Exceeded {
		t.Errorf("totals %+v", totals)
	}
}

// TestConcurrentSalesEachCrossing: the opening figure is EUR 9,000 and two
// sales arrive at once, each of which alone takes the total over EUR
// 10,000. Decided in append order, the first crosses and the second comes
// after the crossing: neither is taxed at origin, exactly one says it
// crossed, one event.
func TestConcurrentSalesEachCrossing(t *testing.T) {
	seller := smallIrishSeller
	seller.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "9000"}}
	for round := 0; round < 3; round++ {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
		b := fiscaltest.Books(t, e, 0)
		var wg sync.WaitGroup
		recs := make([]*fiscal.Record, 2)
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := b.Settle(context.Background(), fiscaltest.Request(20+i, "2000", "DE", "2026-04-10T14:30:00Z"), "")
				if err != nil {
					t.Error(err)
					return
				}
				recs[i] = res.Record
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		crossed := 0
		for _, r := range recs {
			if round == 0 {
				t.Log(thresholdLine(r))
			}
			if r.Classification.TaxingCountry != "DE" {
				t.Errorf("round %d: a crossing sale taxed at origin: %s", round, thresholdLine(r))
			}
			if r.Classification.Threshold.Crossed {
				crossed++
			}
		}
		if crossed != 1 || len(thresholdEvents(t, e)) != 1 {
			t.Errorf("round %d: %d sales say they crossed, %d events; want 1 and 1", round, crossed, len(thresholdEvents(t, e)))
		}
	}
}

// usOSSSeller is the invoicing-law table's full US seller: registered for
// the non-Union OSS (identification IE), so that its B2C sales are taxed
// in the consumer's state at that state's rate on the local day.
func usOSSSeller(t *testing.T) fiscal.Seller {
	return fiscaltest.LawSellerOf(t, "us-full")
}

// territoryPostcodes: a postal code inside each territory with rates of
// its own, to reach its rate changes (not results: the rates come from
// the vat package's table).
var territoryPostcodes = map[string]string{
	"Azores": "9500-123", "Madeira": "9000-018", "Jungholz": "6691", "Mittelberg": "6991",
}

var deliveryDate = regexp.MustCompile(`<cbc:ActualDeliveryDate>([0-9-]+)</cbc:ActualDeliveryDate>`)

// TestLocalMidnightThroughSettle: every rate change of the vat package's
// table (vat.Rates().Changes(), 2024–2026), a US OSS seller's sale to a
// consumer of the place one minute before and one minute after local
// midnight. The record's supply date is the local day, its zone the
// place's, its rate the period's of that day (or a review when the table
// holds no confirmed rate); a processed record's invoice states the local
// day as BT-72 ActualDeliveryDate.
func TestLocalMidnightThroughSettle(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2027, 1, 2, 12, 0, 0, 0, time.UTC), usOSSSeller(t)))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	n, cases, processed, invoices := 0, 0, 0, 0
	var table []string
	for _, ch := range vat.Rates().Changes() {
		if ch.Kind == "" {
			continue // the reduced list prices no supply kind of its own
		}
		before := ch.Midnight.Add(-time.Minute)
		for _, side := range []struct {
			at     time.Time
			day    string
			period vat.RatePeriod
		}{
			{before, dayBefore(ch.Day), ch.Before},
			{ch.Midnight.Add(time.Minute), ch.Day, ch.After},
		} {
			n++
			req := fiscaltest.Request(1000+n, "12.34", ch.Country, side.at.Format(time.RFC3339))
			req.SupplyKind = ch.Kind
			req.ConsumerPostalCode = territoryPostcodes[ch.Territory]
			res, err := b.Settle(ctx, req, "")
			if err != nil {
				t.Fatalf("%s %s at %s: %v", ch.Country, ch.Kind, side.at, err)
			}
			r := res.Record
			c := r.Classification
			cases++
			got := "review"
			switch {
			case !side.period.Covered:
				if !slices.Contains(reasons(r), vat.ReasonDateOutsideRateTable) {
					t.Errorf("%s %s %s: %v, want date_outside_rate_table", ch.Country, ch.Kind, side.at, reasons(r))
				}
			case !side.period.Confirmed:
				if c.Determined() {
					t.Errorf("%s %s %s: determined although the table has no confirmed rate", ch.Country, ch.Kind, side.at)
				}
			default:
				if c.RatePercent == nil || !c.RatePercent.Decimal().Equal(side.period.Percents[0]) {
					t.Errorf("%s/%s %s at %s: rate %v, want %s", ch.Country, ch.Territory, ch.Kind, side.at, c.RatePercent, side.period.Percents[0])
				} else {
					got = c.RatePercent.Decimal().String() + " %"
				}
			}
			if side.period.Covered && (c.SupplyDate != side.day || c.TimeZone != ch.Zone) {
				t.Errorf("%s %s at %s: dated %s in %s, want %s in %s", ch.Country, ch.Kind, side.at, c.SupplyDate, c.TimeZone, side.day, ch.Zone)
			}
			if r.ReviewStatus == fiscal.StatusProcessed {
				processed++
				doc, _, err := b.Invoice(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				m := deliveryDate.FindSubmatch(doc)
				if m == nil || string(m[1]) != side.day {
					t.Errorf("%s: invoice delivery date %q, want the local day %s", r.ID, m, side.day)
				}
				invoices++
			}
			place := ch.Country
			if ch.Territory != "" {
				place += "/" + ch.Territory
			}
			table = append(table, fmt.Sprintf("%-14s %-15s %s UTC  local %s %-17s %-8s %s", place, ch.Kind, side.at.Format("2006-01-02 15:04"), c.SupplyDate, ch.Zone, got, r.ReviewStatus))
		}
	}
	if cases < 20 {
		t.Fatalf("only %d local-midnight cases", cases)
	}
	t.Logf("%d cases (%d rate changes × 2), %d processed, %d invoices with the local delivery date:\n%s", cases, cases/2, processed, invoices, strings.Join(table, "\n"))
}

func dayBefore(day string) string {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		panic(err)
	}
	return d.AddDate(0, 0, -1).Format(time.DateOnly)
}

// TestArt91LatestPublication: under the default Art. 91(2) policy a sale at
// 08:00 Frankfurt time converts at the previous ECB publication (the day's
// reference rate is published around 16:00 CET), one at 17:00 at the day's
// own; the record's provenance names the policy, the publication date and
// the instant from which it counted as published. With the account option
// "rate of the day" the 08:00 sale takes the day's rate. Winter (CET) and
// summer (CEST) days, and a Monday (the previous publication is Friday's).
// The publications expected are read from the embedded ECB table.
func TestArt91LatestPublication(t *testing.T) {
	ofDay := usOSSSeller(t)
	ofDay.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), usOSSSeller(t), ofDay))
	emb, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	frankfurt, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tz database for Europe/Berlin: %v", err)
	}
	// publicationOn is the embedded publication for the day of at, and the
	// one before it.
	publications := func(day time.Time) (string, string) {
		same, err := emb.Lookup("USD", day.Add(12*time.Hour), fx.ForDayOrPrevious)
		if err != nil || same.RateDate != day.Format(time.DateOnly) {
			t.Fatalf("no publication on %s: %+v %v", day.Format(time.DateOnly), same, err)
		}
		prev, err := emb.Lookup("USD", day.Add(-12*time.Hour), fx.ForDayOrPrevious)
		if err != nil {
			t.Fatal(err)
		}
		return same.RateDate, prev.RateDate
	}
	var table []string
	n := 0
	for _, day := range []string{"2026-03-10", "2025-07-15", "2026-03-09"} {
		d, _ := time.Parse(time.DateOnly, day)
		same, prev := publications(d)
		for _, c := range []struct {
			hour    int
			account int
			want    string
		}{{8, 0, prev}, {17, 0, same}, {8, 1, same}, {17, 1, same}} {
			n++
			local := time.Date(d.Year(), d.Month(), d.Day(), c.hour, 0, 0, 0, frankfurt)
			r := settleOK(t, fiscaltest.Books(t, e, c.account), fiscaltest.Request(2000+n, "100", "DE", local.UTC().Format(time.RFC3339)))
			rt := r.FX.USDPerEUR
			if rt == nil {
				t.Fatalf("%s: no rate: %v", local, reasons(r))
			}
			wantPolicy := fx.LatestPublishedAt
			if c.account == 1 {
				wantPolicy = fx.ForDayOrPrevious
			}
			if rt.RateDate != c.want || rt.Policy != wantPolicy || rt.Source == "" {
				t.Errorf("%s %s: publication %s policy %s, want %s under %s", day, local.Format("15:04 MST"), rt.RateDate, rt.Policy, c.want, wantPolicy)
			}
			if wantPolicy == fx.LatestPublishedAt {
				pub, err := fx.PublicationInstant(rt.RateDate)
				if err != nil || rt.PublishedFrom != pub.UTC().Format(time.RFC3339) || !pub.Before(local) {
					t.Errorf("%s: publishedFrom %q, want %s before the sale", r.ID, rt.PublishedFrom, pub.UTC().Format(time.RFC3339))
				}
			}
			table = append(table, fmt.Sprintf("%s %s (%s UTC)  %-20s → ECB %s USD %s publishedFrom=%s", day, local.Format("15:04 MST"), local.UTC().Format("15:04"), rt.Policy, rt.RateDate, rt.Raw, rt.PublishedFrom))
		}
	}
	t.Logf("Art. 91(2) table:\n%s", strings.Join(table, "\n"))
}

// TestMissingRegistrationsThroughSettle: each outcome that needs a
// registration the account does not list is PENDING_MANUAL_REVIEW with
// seller_not_registered naming it, never a silently charged rate (Art.
// 369b, 369a(2), 213/214 Directive 2006/112/EC; VATA 1994 s.3, Sch. 1A
// for the UK); the same sale with the registration is processed.
func TestMissingRegistrationsThroughSettle(t *testing.T) {
	reg := func(scheme, country string) vat.Registration {
		return vat.Registration{Scheme: scheme, Country: country}
	}
	ie := func(over bool, regs ...vat.Registration) fiscal.Seller {
		s := smallIrishSeller
		s.OverThreshold, s.Registrations = over, regs
		return s
	}
	de := fiscal.Seller{LegalName: "Kleine GmbH", VATNumber: "DE812847601", LegalID: "HRB 1", Country: "DE",
		Address: fiscal.Address{Street: "Str. 1", City: "Berlin", PostalCode: "10115"}}
	deOSSOnly := de
	deOSSOnly.Registrations = []vat.Registration{reg(vat.RegistrationOSSUnion, "DE")}
	cases := []struct {
		name    string
		seller  fiscal.Seller
		country string
		needs   string // what the reason must name
	}{
		{"Irish seller to Northern Ireland without a VRN", ie(false, reg(vat.RegistrationNational, "IE"), reg(vat.RegistrationOSSUnion, "IE")), "XI", "UK VAT registration"},
		{"Irish seller to Great Britain without a VRN", ie(false, reg(vat.RegistrationNational, "IE"), reg(vat.RegistrationOSSUnion, "IE")), "GB", "UK VAT registration"},
		{"Irish seller over the threshold without OSS", ie(true, reg(vat.RegistrationNational, "IE")), "DE", "Union OSS"},
		{"German seller below the threshold without its national registration", deOSSOnly, "FR", "national VAT registration in DE"},
		{"German seller to a German consumer without its national registration", deOSSOnly, "DE", "national VAT registration in DE"},
	}
	var sellers []fiscal.Seller
	for _, c := range cases {
		sellers = append(sellers, c.seller)
	}
	withVRN := ie(false, reg(vat.RegistrationNational, "IE"), reg(vat.RegistrationUKVRN, "GB"))
	withVRN.UKRateAgreement = "HMRC VWET agreement 2026/0001 (test)"
	withOSS := ie(true, reg(vat.RegistrationNational, "IE"), reg(vat.RegistrationOSSUnion, "IE"))
	sellers = append(sellers, withVRN, withOSS)
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), sellers...))
	for i, c := range cases {
		r := settleOK(t, fiscaltest.Books(t, e, i), fiscaltest.Request(3000+i, "50", c.country, "2026-03-02T09:00:00Z"))
		detail := reasonDetail(r, vat.ReasonSellerNotRegistered)
		if r.ReviewStatus != fiscal.StatusPendingReview || detail == "" || !strings.Contains(detail, c.needs) || r.Invoice != nil || r.FX.VATEUR != "" {
			t.Errorf("%s: %s %v %q, want seller_not_registered naming %q and no VAT charged", c.name, r.ReviewStatus, reasons(r), detail, c.needs)
			continue
		}
		t.Logf("%s → %s seller_not_registered: %s", c.name, r.ReviewStatus, detail)
	}
	for i, c := range []string{"XI", "DE"} {
		r := settleOK(t, fiscaltest.Books(t, e, len(cases)+i), fiscaltest.Request(3100+i, "50", c, "2026-03-02T09:00:00Z"))
		if slices.Contains(reasons(r), vat.ReasonSellerNotRegistered) || !r.Classification.Determined() {
			t.Errorf("registered seller to %s: %s %v", c, r.ReviewStatus, reasons(r))
		}
	}
}

// TestElectronicInterfaceThroughSettle: an account that declares it is an
// electronic interface (a marketplace of APIs) is the deemed supplier of
// the services sold through it (Art. 28 Directive 2006/112/EC, Art. 9a(1)
// Implementing Regulation 282/2011): its record names it so and names the
// underlying provider, and its own profile decides the VAT. Without a
// provider the record waits for review; an account attesting the Art. 9a
// rebuttal is an intermediary and the provider's VAT is not determined.
func TestElectronicInterfaceThroughSettle(t *testing.T) {
	iface := fiscaltest.IrishSeller
	iface.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}}
	iface.ElectronicInterface = true
	rebutted := iface
	rebutted.Art9aRebutted = true
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), iface, rebutted))
	ctx := context.Background()
	provider := &vat.Provider{Name: "Weather Tools Inc.", Country: "US"}

	req := fiscaltest.Request(4000, "12", "DE", "2026-03-02T09:00:00Z")
	req.UnderlyingProvider = provider
	b := fiscaltest.Books(t, e, 0)
	r := settleOK(t, b, req)
	sr := r.Classification.Supplier
	if r.ReviewStatus != fiscal.StatusProcessed || sr == nil || sr.Role != vat.SupplierRoleDeemed || sr.UnderlyingProvider == nil || sr.UnderlyingProvider.Name != provider.Name || r.Classification.TaxingCountry != "DE" {
		t.Fatalf("deemed supplier: %s %v %+v", r.ReviewStatus, reasons(r), sr)
	}
	t.Logf("deemed supplier record: role=%s provider=%q basis=%q; taxed %s %s %%", sr.Role, sr.UnderlyingProvider.Name, sr.LegalBasis, r.Classification.TaxingCountry, r.Classification.RatePercent)
	doc, _, err := b.Invoice(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) == 0 {
		t.Error("no invoice")
	}

	r = settleOK(t, b, fiscaltest.Request(4001, "12", "DE", "2026-03-02T09:00:00Z"))
	if r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasons(r), vat.ReasonUnderlyingProviderMissing) {
		t.Errorf("interface without provider: %s %v", r.ReviewStatus, reasons(r))
	}
	req = fiscaltest.Request(4002, "12", "DE", "2026-03-02T09:00:00Z")
	req.UnderlyingProvider = provider
	r = settleOK(t, fiscaltest.Books(t, e, 1), req)
	if sr := r.Classification.Supplier; r.ReviewStatus != fiscal.StatusPendingReview || !slices.Contains(reasons(r), vat.ReasonUnderlyingProviderIsSupplier) || sr == nil || sr.Role != vat.SupplierRoleIntermediary || r.FX.VATEUR != "" {
		t.Errorf("rebutted: %s %v %+v", r.ReviewStatus, reasons(r), sr)
	}
}

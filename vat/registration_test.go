package vat

import (
	"strings"
	"testing"
	"time"
)

func regs(list ...string) []Registration {
	out := []Registration{}
	for _, r := range list {
		scheme, country, _ := strings.Cut(r, ":")
		out = append(out, Registration{Scheme: scheme, Country: country})
	}
	return out
}

// TestRegistrations: each outcome against the registration it needs
// (registration.go); expected lines written from the rules.
func TestRegistrations(t *testing.T) {
	over := func(s Seller) Seller { s.OverThreshold = true; return s }
	atB2B := Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{"not stated: no check", Input{Seller{Country: "IE"}, b2c("XI"), digital},
			"DETERMINED UK_B2C S 20 GB pos=GB-NIR - B2C [ruleset_experimental]"},
		{"Irish seller, Northern Ireland consumer, no UK VRN", Input{Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:IE")}, b2c("XI"), digital},
			"MANUAL_REVIEW_REQUIRED UK_B2C - - GB pos=GB-NIR - B2C [seller_not_registered,ruleset_experimental]"},
		{"Irish seller, Great Britain consumer, no UK VRN", Input{Seller{Country: "IE", Registrations: regs("national:IE")}, b2c("GB"), digital},
			"MANUAL_REVIEW_REQUIRED UK_B2C - - GB pos=GB - B2C [seller_not_registered,ruleset_experimental]"},
		{"Irish seller with a UK VRN", Input{Seller{Country: "IE", Registrations: regs("national:IE", "uk_vrn:GB")}, b2c("XI"), digital},
			"DETERMINED UK_B2C S 20 GB pos=GB-NIR - B2C [ruleset_experimental]"},
		{"over the threshold without OSS", Input{over(Seller{Country: "IE", Registrations: regs("national:IE")}), b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_not_registered]"},
		{"over the threshold with the Union OSS", Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:IE")}), b2c("DE"), digital},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []"},
		{"over the threshold, registered in the state of consumption", Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "national:DE")}), b2c("DE"), digital},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []"},
		{"origin taxation needs the home registration", Input{Seller{Country: "DE", Registrations: regs("oss_union:DE")}, b2c("FR"), digital},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - DE pos=DE - B2C [seller_not_registered,origin_taxation_below_threshold]"},
		{"stated none: a domestic sale needs a registration", Input{Seller{Country: "DE", Registrations: regs()}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - DE pos=DE - B2C [seller_not_registered]"},
		{"fixed establishment in the customer's state needs a registration there", Input{Seller{Country: "DE", OtherEstablishments: []string{"FR"}, Registrations: regs("national:DE", "oss_union:DE")}, b2c("FR"), digital},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - FR pos=FR - B2C [seller_not_registered,fixed_establishment_in_buyer_country]"},
		{"non-EU seller without the non-Union OSS", Input{Seller{Country: "US", Registrations: regs("national:FR")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DE pos=DE - B2C [seller_not_registered]"},
		{"non-EU seller with the non-Union OSS anywhere", Input{Seller{Country: "US", Registrations: regs("oss_non_union:NL")}, b2c("DE"), digital},
			"DETERMINED OSS_B2C/non-union S 19 DE pos=DE - B2C []"},
		{"IOSS is for imported goods, not services", Input{Seller{Country: "US", Registrations: regs("ioss:NL")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DE pos=DE - B2C [seller_not_registered]"},
		{"reverse charge by an EU seller needs its home registration (Art. 214(1)(e))", Input{Seller{Country: "DE", Registrations: regs("oss_union:DE")}, atB2B, digital},
			"MANUAL_REVIEW_REQUIRED REVERSE_CHARGE_B2B - - AT pos=AT - B2B [seller_not_registered]"},
		{"reverse charge by a non-EU seller needs none", Input{Seller{Country: "US", Registrations: regs()}, atB2B, digital},
			"DETERMINED REVERSE_CHARGE_B2B AE 0 AT pos=AT VATEX-EU-AE B2B []"},
		{"outside scope needs none", Input{Seller{Country: "DE", Registrations: regs()}, b2c("US"), digital},
			"DETERMINED OUTSIDE_SCOPE O - - pos=US VATEX-EU-O B2C [local_tax_not_assessed]"},
		{"UK reverse charge needs none", Input{Seller{Country: "DE", Registrations: regs("national:DE")}, Buyer{Country: "GB", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684")}, digital},
			"DETERMINED UK_REVERSE_CHARGE AE 0 GB pos=GB - B2B [ruleset_experimental]"},
		{"UK seller without a VRN", Input{Seller{Country: "GB", Registrations: regs()}, b2c("GB"), digital},
			"MANUAL_REVIEW_REQUIRED UK_DOMESTIC - - GB pos=GB - B2C [seller_not_registered,ruleset_experimental]"},
		{"UK VRN without a country", Input{Seller{Country: "GB", Registrations: regs("uk_vrn")}, b2c("GB"), digital},
			"DETERMINED UK_DOMESTIC S 20 GB pos=GB - B2C [ruleset_experimental]"},
		{"Greek national registration as EL", Input{Seller{Country: "GR", Registrations: regs("national:EL")}, b2c("GR"), digital},
			"DETERMINED DOMESTIC S 24 GR pos=GR - B2C []"},
		// Contradictions (Art. 369a(2), 358a(1)).
		{"Union OSS identified in another state than the establishment", Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_union:FR")}), b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_registrations_inconsistent,seller_not_registered]"},
		{"non-EU seller in the Union OSS without an establishment", Input{Seller{Country: "US", Registrations: regs("oss_union:IE")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DE pos=DE - B2C [seller_registrations_inconsistent,seller_not_registered]"},
		{"non-EU seller with an Irish establishment in the Union OSS", Input{Seller{Country: "US", OtherEstablishments: []string{"IE"}, Registrations: regs("oss_union:IE")}, b2c("DE"), digital},
			"DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []"},
		{"EU seller in the non-Union OSS", Input{over(Seller{Country: "IE", Registrations: regs("national:IE", "oss_non_union:IE")}), b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_registrations_inconsistent,seller_not_registered]"},
		{"unknown scheme", Input{Seller{Country: "DE", Registrations: regs("national:DE", "moss:DE")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - DE pos=DE - B2C [seller_registrations_inconsistent]"},
		{"national registration outside the EU", Input{Seller{Country: "DE", Registrations: regs("national:DE", "national:CH")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED DOMESTIC - - DE pos=DE - B2C [seller_registrations_inconsistent]"},
		{"two member states of identification", Input{Seller{Country: "US", Registrations: regs("oss_non_union:NL", "oss_non_union:IE")}, b2c("DE"), digital},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DE pos=DE - B2C [seller_registrations_inconsistent]"},
	}
	for _, c := range cases {
		d := Determine(c.in)
		checkInvariants(t, c.in, d)
		if s := summaryPlace(d); s != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, s, c.want)
			for _, r := range d.Reasons {
				t.Logf("  %s: %s", r.Code, r.Detail)
			}
		}
	}
}

// The reason names the missing registration.
func TestSellerNotRegisteredDetail(t *testing.T) {
	d := Determine(Input{Seller{Country: "IE", OverThreshold: true, Registrations: regs("national:IE")}, b2c("DE"), digital})
	detail := d.Reasons[0].Detail
	for _, want := range []string{"the Union OSS with IE as member state of identification", "a national VAT registration in DE", "Art. 369b", "national:IE"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	uk := Determine(Input{Seller{Country: "IE", Registrations: regs("national:IE")}, b2c("XI"), digital})
	if !strings.Contains(uk.Reasons[0].Detail, "a UK VAT registration (VRN)") || !strings.Contains(uk.Reasons[0].Detail, "Sch. 1A") {
		t.Errorf("UK detail: %s", uk.Reasons[0].Detail)
	}
}

// TestRegistrationWindows: a registration applies on the days of its
// window (validFrom, validTo inclusive), judged on the day of supply in the
// taxing territory's zone, the day the rate and the OSS return period are
// decided by (Art. 57d, 57f, 57g Implementing Regulation (EU) No
// 282/2011).
func TestRegistrationWindows(t *testing.T) {
	at := func(s string) Supply {
		d, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return Supply{Kind: KindDigitalService, Date: d}
	}
	reg := func(scheme, country, from, to string) Registration {
		return Registration{Scheme: scheme, Country: country, ValidFrom: from, ValidTo: to}
	}
	ie := func(rs ...Registration) Seller {
		return Seller{Country: "IE", OverThreshold: true, Registrations: append([]Registration{{Scheme: RegistrationNational, Country: "IE"}}, rs...)}
	}
	const ossDE = "DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []"
	const notRegistered = "MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_not_registered]"
	const inconsistent = "MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_registrations_inconsistent,seller_not_registered]"
	cases := []struct {
		name   string
		in     Input
		want   string
		detail string // in the first reason's detail
	}{
		// 21:30 UTC on 30 September is 23:30 in Berlin, 22:30 UTC is 00:30 on 1 October.
		{"the day before the OSS applies, in Berlin", Input{ie(reg("oss_union", "IE", "2025-10-01", "")), b2c("DE"), at("2025-09-30T21:30:00Z")},
			notRegistered, "on the day of supply 2025-09-30 (Europe/Berlin): oss_union:IE from 2025-10-01 does not apply that day"},
		{"its first day in Berlin, still 30 September in UTC", Input{ie(reg("oss_union", "IE", "2025-10-01", "")), b2c("DE"), at("2025-09-30T22:30:00Z")}, ossDE, ""},
		{"its last day, inclusive", Input{ie(reg("oss_union", "IE", "", "2025-12-31")), b2c("DE"), at("2025-12-31T22:30:00Z")}, ossDE, ""},
		{"the day after it ceased", Input{ie(reg("oss_union", "IE", "2025-04-01", "2025-12-31")), b2c("DE"), at("2025-12-31T23:30:00Z")},
			notRegistered, "oss_union:IE from 2025-04-01 to 2025-12-31 does not apply that day"},
		{"a national registration where the consumer is, from a date", Input{ie(reg("national", "DE", "2025-09-01", "")), b2c("DE"), at("2025-09-02T10:00:00Z")}, ossDE, ""},
		{"the member state of identification changed (Art. 57f)", Input{ie(reg("oss_union", "FR", "", "2025-06-30"), reg("oss_union", "IE", "2025-07-01", "")), b2c("DE"), at("2025-09-02T10:00:00Z")}, ossDE, ""},
		{"before the change, the old state was the establishment's", Input{Seller{Country: "FR", OverThreshold: true, Registrations: []Registration{{Scheme: "national", Country: "FR"}, reg("oss_union", "FR", "", "2025-06-30"), reg("oss_union", "IE", "2025-07-01", "")}}, b2c("DE"), at("2025-05-02T10:00:00Z")}, ossDE, ""},
		{"two member states of identification on shared days", Input{ie(reg("oss_union", "IE", "2025-01-01", ""), reg("oss_union", "FR", "", "2025-03-31")), b2c("DE"), at("2025-09-02T10:00:00Z")},
			"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [seller_registrations_inconsistent]", "for days it shares"},
		{"validTo before validFrom", Input{ie(reg("oss_union", "IE", "2025-10-01", "2025-09-30")), b2c("DE"), at("2025-09-02T10:00:00Z")}, inconsistent, "validTo 2025-09-30 is before validFrom 2025-10-01"},
		{"validFrom not a date", Input{ie(reg("oss_union", "IE", "2025-9-1", "")), b2c("DE"), at("2025-09-02T10:00:00Z")}, inconsistent, `validFrom "2025-9-1"`},
		{"validTo not a calendar date", Input{ie(reg("oss_union", "IE", "", "2025-02-30")), b2c("DE"), at("2025-09-02T10:00:00Z")}, inconsistent, `validTo "2025-02-30"`},
	}
	for _, c := range cases {
		d := Determine(c.in)
		checkInvariants(t, c.in, d)
		if s := summaryPlace(d); s != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, s, c.want)
			for _, r := range d.Reasons {
				t.Logf("  %s: %s", r.Code, r.Detail)
			}
			continue
		}
		if c.detail != "" && (len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0].Detail, c.detail)) {
			t.Errorf("%s: first reason %+v lacks %q", c.name, d.Reasons, c.detail)
		}
	}
}

// TestRegistrationAppliesOn: the window's bounds are inclusive and an
// invalid window applies to no day.
func TestRegistrationAppliesOn(t *testing.T) {
	g := Registration{Scheme: RegistrationOSSUnion, Country: "IE", ValidFrom: "2026-04-01", ValidTo: "2026-06-30"}
	for day, want := range map[string]bool{"2026-03-31": false, "2026-04-01": true, "2026-06-30": true, "2026-07-01": false, "": true} {
		if got := g.AppliesOn(day); got != want {
			t.Errorf("%s on %q: %v, want %v", describeRegistration(g), day, got, want)
		}
	}
	bad := Registration{Scheme: RegistrationOSSUnion, Country: "IE", ValidFrom: "2026-07-01", ValidTo: "2026-06-30"}
	if bad.AppliesOn("2026-06-30") || bad.CheckWindow() == nil {
		t.Errorf("an inverted window applies or checks: %v", bad.CheckWindow())
	}
	if err := (Registration{ValidFrom: "2026-04-01"}).CheckWindow(); err != nil {
		t.Errorf("open-ended window: %v", err)
	}
}

// TestRegistrationDaySpelling: a window's bound is a calendar date in its
// one spelling, YYYY-MM-DD.
func TestRegistrationDaySpelling(t *testing.T) {
	for s, want := range map[string]int{"2026-07-01": 20260701, "2024-02-29": 20240229, "0001-01-01": 10101} {
		if k, ok := registrationDay(s); !ok || k != want {
			t.Errorf("%q: %d %v, want %d", s, k, ok, want)
		}
	}
	for _, s := range []string{"2025-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-4-1", "2026-07-01T00:00:00Z", " 2026-07-01", "2026/07/01", "+026-07-01", "2026-07-0a"} {
		if _, ok := registrationDay(s); ok {
			t.Errorf("%q read as a date", s)
		}
	}
}

// TestRegistrationWindowCitesItsOwnLaw: a registration that does not
// apply on the day of supply is explained by the law of its own kind: the
// EU special schemes' start and end rules (Art. 57d, 57f, 57g Implementing
// Regulation (EU) No 282/2011) for an OSS registration only; a UK VRN's
// effective date is the UK's (VATA 1994), a national registration's the
// member state's. A review found a UK VRN valid from 1 July explained by
// the EU OSS articles.
func TestRegistrationWindowCitesItsOwnLaw(t *testing.T) {
	at := func(s string) time.Time {
		d, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	seller := func(r Registration) Seller {
		return Seller{Country: "IE", OverThreshold: true, Registrations: []Registration{{Scheme: RegistrationNational, Country: "IE"}, r}}
	}
	cases := []struct {
		name      string
		in        Input
		want, not string
	}{
		// 22:30 UTC on 30 June is 23:30 in London, still 30 June.
		{"a UK VRN from 1 July", Input{Seller: seller(Registration{Scheme: RegistrationUKVRN, ValidFrom: "2026-07-01"}), Buyer: b2c("GB"),
			Supply: Supply{Kind: KindDigitalService, Date: at("2026-06-30T22:30:00Z")}}, "does not apply that day (a UK registration", "282/2011"},
		{"a national registration in Germany from 1 July", Input{Seller: Seller{Country: "IE", OverThreshold: true, Registrations: []Registration{{Scheme: RegistrationNational, Country: "IE"},
			{Scheme: RegistrationNational, Country: "DE", ValidFrom: "2026-07-01"}}}, Buyer: b2c("DE"),
			Supply: Supply{Kind: KindDigitalService, Date: at("2026-06-15T10:00:00Z")}}, "does not apply that day (a national identification", "282/2011"},
		{"the Union OSS from 1 July", Input{Seller: seller(Registration{Scheme: RegistrationOSSUnion, Country: "IE", ValidFrom: "2026-07-01"}), Buyer: b2c("DE"),
			Supply: Supply{Kind: KindDigitalService, Date: at("2026-06-15T10:00:00Z")}}, "Art. 57d, 57f and 57g Implementing Regulation (EU) No 282/2011", ""},
	}
	for _, c := range cases {
		d := Determine(c.in)
		var detail string
		for _, r := range d.Reasons {
			if r.Code == ReasonSellerNotRegistered {
				detail = r.Detail
			}
		}
		if detail == "" || !strings.Contains(detail, c.want) || c.not != "" && strings.Contains(detail, c.not) {
			t.Errorf("%s: seller_not_registered %q, want it to cite %q and not %q", c.name, detail, c.want, c.not)
		}
	}
}

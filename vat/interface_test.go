package vat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestElectronicInterface(t *testing.T) {
	market := Seller{Country: "IE", OverThreshold: true, ElectronicInterface: true}
	tool := &Provider{Name: "Weather Tools Inc.", Country: "US"}
	s := digital
	s.Provider = &Provider{Name: "Weather Tools Inc.", Country: "US"}

	d := Determine(Input{market, b2c("DE"), s})
	if summaryPlace(d) != "DETERMINED OSS_B2C/union S 19 DE pos=DE - B2C []" || d.Supplier == nil || d.Supplier.Role != SupplierRoleDeemed ||
		d.Supplier.UnderlyingProvider == nil || d.Supplier.UnderlyingProvider.Name != "Weather Tools Inc." ||
		!strings.Contains(d.Supplier.LegalBasis, "Art. 28 Directive 2006/112/EC") || !strings.Contains(d.Supplier.LegalBasis, "Art. 9a(1)") {
		t.Errorf("deemed supplier: %s %+v", summaryPlace(d), d.Supplier)
	}
	b, _ := json.Marshal(d.Supplier)
	if !strings.HasPrefix(string(b), `{"role":"deemed_supplier","underlyingProvider":{"name":"Weather Tools Inc.","country":"US"},"legalBasis":"Art. 28`) {
		t.Errorf("JSON %s", b)
	}
	s.Provider.Name = "changed"
	if d.Supplier.UnderlyingProvider.Name != "Weather Tools Inc." {
		t.Error("the determination shares the caller's Provider")
	}

	// The deemed supplier's own profile decides: below the threshold it
	// charges its own VAT.
	below := market
	below.OverThreshold = false
	if d := Determine(Input{below, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, Provider: tool}}); d.TaxingCountry != "IE" || d.Supplier.Role != SupplierRoleDeemed {
		t.Errorf("below the threshold: %s", summaryPlace(d))
	}

	// No provider named.
	if d := Determine(Input{market, b2c("DE"), digital}); summaryPlace(d) != "MANUAL_REVIEW_REQUIRED OSS_B2C/union - - DE pos=DE - B2C [underlying_provider_missing]" {
		t.Errorf("no provider: %s", summaryPlace(d))
	}

	// Presumption rebutted: the provider supplies; nothing is charged in
	// the interface's name and its profile is not used.
	rebutted := market
	rebutted.Art9aRebutted = true
	d = Determine(Input{rebutted, b2c("DE"), Supply{Kind: KindSaaS, Date: sep1, Provider: tool}})
	if summaryPlace(d) != "MANUAL_REVIEW_REQUIRED - - - - pos=- - - [underlying_provider_is_supplier]" || d.Supplier.Role != SupplierRoleIntermediary ||
		d.SupplyDate != "2026-09-01" || d.TimeZone != "Europe/Berlin" || !strings.Contains(d.Reasons[0].Detail, "Weather Tools Inc.") {
		t.Errorf("rebutted: %s %+v %s %s", summaryPlace(d), d.Supplier, d.SupplyDate, d.TimeZone)
	}

	// Not an interface: no section, even with Art9aRebutted set.
	if d := Determine(Input{Seller{Country: "IE", Art9aRebutted: true}, b2c("IE"), digital}); d.Supplier != nil || !d.Determined() {
		t.Errorf("plain seller: %s %+v", summaryPlace(d), d.Supplier)
	}
}

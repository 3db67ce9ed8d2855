package vat

import (
	"fmt"
	"strings"
	"time"
)

// summary renders the decisive fields of a determination on one line:
// status regime[/scheme] category rate taxing-country pos=place vatex
// treatment [reason codes]. "-" marks an empty field.
func summary(d Determination) string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	regime := dash(d.Regime)
	if d.Scheme != "" {
		regime += "/" + d.Scheme
	}
	rate := "-"
	if d.RatePercent != nil {
		rate = d.RatePercent.String()
	}
	codes := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		codes[i] = r.Code
	}
	return fmt.Sprintf("%s %s %s %s %s pos=%s %s %s [%s]", d.Status, regime, dash(d.Category), rate,
		dash(d.TaxingCountry), dash(d.PlaceOfSupply), dash(d.VATEX), dash(d.BuyerTreatment), strings.Join(codes, ","))
}

// describe renders an input on one line for the golden table.
func describe(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seller=%s", dashIfEmpty(in.Seller.Country))
	for _, e := range in.Seller.OtherEstablishments {
		fmt.Fprintf(&b, "+%s", e)
	}
	if in.Seller.OverThreshold {
		b.WriteString(">10k")
	}
	if in.Seller.OptedForDestination {
		b.WriteString(":opted")
	}
	b.WriteString(describeSellerExtra(in.Seller)) // golden_cases_test.go
	fmt.Fprintf(&b, " buyer=%s", dashIfEmpty(in.Buyer.Country))
	if in.Buyer.PostalCode != "" {
		fmt.Fprintf(&b, "/%s", strings.ReplaceAll(in.Buyer.PostalCode, " ", "_"))
	}
	if in.Buyer.Business {
		b.WriteString(" business")
	}
	if in.Buyer.VATNumber != "" {
		fmt.Fprintf(&b, " vat=%s", strings.ReplaceAll(in.Buyer.VATNumber, " ", "_"))
		if r := in.Buyer.Registry; r != nil {
			fmt.Fprintf(&b, "(%s:%s", dashIfEmpty(r.Registry), r.Status)
			if r.Number != "" && NormalizeNumber(r.Number) != NormalizeNumber(in.Buyer.VATNumber) {
				fmt.Fprintf(&b, ":%s", r.Number)
			}
			b.WriteString(")")
		} else {
			b.WriteString("(unchecked)")
		}
	}
	b.WriteString(describeBuyerExtra(in.Buyer)) // golden_cases_test.go
	date := "-"
	if !in.Supply.Date.IsZero() {
		date = in.Supply.Date.UTC().Format(time.DateOnly)
	}
	fmt.Fprintf(&b, " kind=%s date=%s", dashIfEmpty(in.Supply.Kind), date)
	if len(in.Supply.Conditions) > 0 {
		fmt.Fprintf(&b, " cond=%s", strings.Join(in.Supply.Conditions, "+"))
	}
	return b.String()
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// day returns noon UTC of a date, the usual test supply time.
func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }

// confirmed is a complete registry proof for number.
func confirmed(registry, number string) *RegistryCheck {
	return &RegistryCheck{
		Status: RegistryValid, Registry: registry, Number: number,
		CheckedAt:         time.Date(2026, 9, 1, 11, 59, 0, 0, time.UTC),
		RequestIdentifier: "WAPIAAAAZ0000001",
		Name:              "Example GmbH", Address: "Example Street 1",
	}
}

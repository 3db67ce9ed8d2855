package returns_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReturnStatesItsDueDate: an OSS return is submitted, and its VAT paid,
// "by the end of the month following the end of the tax period covered by
// the return" (Art. 369f and 369i Directive 2006/112/EC for the Union
// scheme, Art. 364 and 367 for the non-Union scheme). The return stated
// its period but not when it was due. The expected dates are written out
// by hand from that rule, not computed.
func TestReturnStatesItsDueDate(t *testing.T) {
	due := []struct {
		p    returns.Period
		date string
	}{
		{returns.Period{Year: 2025, Quarter: 4}, "2026-01-31"},
		{returns.Period{Year: 2026, Quarter: 1}, "2026-04-30"},
		{returns.Period{Year: 2026, Quarter: 2}, "2026-07-31"},
		{returns.Period{Year: 2026, Quarter: 3}, "2026-10-31"},
		{returns.Period{Year: 2026, Quarter: 4}, "2027-01-31"},
	}
	now := time.Date(2027, 2, 15, 12, 0, 0, 0, time.UTC)
	nonUnion := fiscal.Seller{LegalName: "Example Inc.", Country: "US", LegalID: "US-EIN-123456789", OverThreshold: true,
		Address:       fiscal.Address{Street: "1 Main Street", City: "Springfield", PostalCode: "12345"},
		Registrations: []vat.Registration{{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372000041"}}}
	cfg := fiscaltest.Config(t, now, nonUnion)
	cfg.NoBackground = true
	for _, c := range []struct {
		books  *fiscal.Books
		scheme string
		basis  []string
	}{
		{newBooks(t, now), vat.SchemeUnion, []string{"369f", "369i"}},
		{fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0), vat.SchemeNonUnion, []string{"364", "367"}},
	} {
		for _, d := range due {
			ret, _, err := returns.OSS(context.Background(), c.books, d.p, returns.Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", c.scheme, d.p, err)
			}
			if ret.Scheme != c.scheme {
				t.Fatalf("%s: scheme %s, want %s", d.p, ret.Scheme, c.scheme)
			}
			if ret.DueDate != d.date {
				t.Errorf("%s return of %s: due %q, want %s (the end of the month following the quarter)", c.scheme, d.p, ret.DueDate, d.date)
			}
			for _, art := range c.basis {
				if !strings.Contains(ret.DueDateBasis, art) || !strings.Contains(ret.DueDateBasis, "Directive 2006/112/EC") {
					t.Errorf("%s return of %s: due-date basis %q does not cite Art. %s", c.scheme, d.p, ret.DueDateBasis, art)
				}
			}
		}
	}
}

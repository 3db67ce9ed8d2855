package listing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestTaxingCountryMustBeACode: TaxingCountry is compared with the
// records' upper-case ISO codes, so "de" or "Germany" matched nothing and
// List answered an empty page as if there were no such records. A value
// that is not an ISO 3166-1 alpha-2 code as the records state them is now
// BAD_REQUEST on taxingCountry; DE, and EL for GR, still select.
func TestTaxingCountryMustBeACode(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	b := demoBooks(t, func() time.Time { return now })
	settleDemo(t, b, 1, "DE")
	settleDemo(t, b, 2, "GR")
	ctx := context.Background()
	for _, c := range []string{"DE", "EL", "GR"} {
		p, err := List(ctx, b, Query{TaxingCountry: c})
		if err != nil || len(p.Data) != 1 {
			t.Errorf("TaxingCountry %q: %v, %d records; want 1", c, err, len(pageOrNil(p)))
		}
	}
	for _, c := range []string{"de", "Germany", "XX", " DE"} {
		p, err := List(ctx, b, Query{TaxingCountry: c})
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "taxingCountry" {
			t.Errorf("TaxingCountry %q: %v, %d records; want BAD_REQUEST on taxingCountry", c, err, len(pageOrNil(p)))
		}
	}
}

func pageOrNil(p *Page) []byte {
	if p == nil {
		return nil
	}
	return make([]byte, len(p.Data))
}

package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestSupplyDateRefusalSaysWhy: a supply_date the capability check refuses
// is refused for its own reason, as the sandbox and the settlements say it
// (a day before any USDC settlement, a fraction of a second RFC 3339 does
// not allow, a zone other than UTC), and a calendar day before 2015 is
// refused as the same instant is, instead of one generic message for every
// timestamp and no check at all for a day.
func TestSupplyDateRefusalSaysWhy(t *testing.T) {
	e := testEngine(t, checkNow, irishSeller)
	for _, tc := range []struct{ date, want string }{
		{"2014-06-01", "2015"},
		{"2014-06-01T00:00:00Z", "2015"},
		{"2026-04-10T12:00:00.1234567891Z", "RFC 3339"},
		{"2026-04-10T12:00:00+02:00", "UTC"},
	} {
		req, err := decodeCheck(`{"seller_country":"IE","buyer_country":"DE","supply_date":"` + tc.date + `","payment":{"protocol":"x402"}}`)
		if err == nil {
			_, err = e.CheckCapabilities(context.Background(), "", req)
		}
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/supply_date" || !strings.Contains(fe.Detail, tc.want) {
			t.Errorf("supply_date %s: %v, want BAD_REQUEST at /supply_date saying %q", tc.date, err, tc.want)
		}
	}
}

package httpserver_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/fiscal402/fiscal402/vat"
)

// TestManualRatePercentSchemaSaysWhatIsAccepted: the OpenAPI pattern of
// ManualDetermination.ratePercent admits exactly the spellings the server
// reads a manual rate in (vat.DetermineManually: a plain decimal string, no
// sign, exponent or leading zero). It allowed a minus sign ("-19", "-0"),
// which the server refuses as manual_rate_invalid, so a client validating
// against the document sent what could only be refused.
func TestManualRatePercentSchemaSaysWhatIsAccepted(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	md := doc.resolve("#/components/schemas/ManualDetermination")
	rp, _ := md["properties"].(map[string]any)["ratePercent"].(map[string]any)
	pat, _ := rp["pattern"].(string)
	if pat == "" {
		t.Fatalf("ManualDetermination.ratePercent has no pattern: %v", rp)
	}
	re := regexp.MustCompile(pat)
	for _, v := range []string{"19", "5.5", "0", "0.0", "100", "-19", "-0", "-5.5", "+19", "019", "1e1", "19.", ".5", "5,5"} {
		_, err := vat.DetermineManually(vat.Input{}, vat.Manual{Regime: vat.RegimeDomestic, TaxingCountry: "DE", RatePercent: v, Reason: "r", DecidedBy: "ops"})
		var me *vat.ManualError
		refused := errors.As(err, &me) && me.Code == vat.ManualRateInvalid && me.Field == "/determination/ratePercent"
		if re.MatchString(v) == refused {
			t.Errorf("ratePercent %q: the document's pattern %s matches it: %v; the server refuses its spelling: %v (%v)", v, pat, re.MatchString(v), refused, err)
		}
	}
}

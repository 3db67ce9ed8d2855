package strictjson

import (
	"errors"
	"strings"
	"testing"
)

// TestNumberForStringNamesWhatIsExpected: a JSON number where a string is
// required is an error at the member, and its detail speaks of decimal
// strings only for members that hold decimals (amounts, rates). Every
// string member said "amounts are decimal strings such as \"1.50\"": a
// client that sent "network": 8453 or "url": 5 was told about amounts.
func TestNumberForStringNamesWhatIsExpected(t *testing.T) {
	type target struct {
		AmountUSDC  string `json:"amountUsdc"`
		RatePercent string `json:"ratePercent"`
		Network     string `json:"network"`
	}
	for _, c := range []struct {
		body, field string
		hint        bool
	}{
		{`{"amountUsdc":1.5}`, "/amountUsdc", true},
		{`{"ratePercent":19}`, "/ratePercent", true},
		{`{"network":8453}`, "/network", false},
	} {
		var v target
		var se *Error
		if err := Decode([]byte(c.body), &v); !errors.As(err, &se) || se.Field != c.field || !strings.Contains(se.Detail, "not a JSON number") {
			t.Errorf("%s: %v, want an error at %s", c.body, err, c.field)
			continue
		}
		if got := strings.Contains(se.Detail, "decimal string"); got != c.hint {
			t.Errorf("%s: detail %q; decimal-string hint %v, want %v", c.body, se.Detail, got, c.hint)
		}
	}
}

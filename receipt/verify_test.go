package receipt

import (
	"errors"
	"testing"
)

func TestVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	rs := f.issue(t, sampleClaims(0), sampleClaimsV2(1), sampleClaims(2))
	for i, r := range rs {
		c, err := Verify(r, f.jwks(t), f.log.vkey)
		if err != nil {
			t.Fatalf("receipt %d: %v\n%s", i, err, r)
		}
		if c.Log.Index != int64(i) {
			t.Errorf("receipt %d: log index %d", i, c.Log.Index)
		}
	}
	t.Logf("%s", rs[1])
}

func stepOf(err error) string {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Step
	}
	return ""
}

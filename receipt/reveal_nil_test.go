package receipt

import (
	"errors"
	"testing"
)

// TestRevealNilClaims: Reveal, like VerifyOpening, answers claims that are
// not there (the nil of a failed Verify) with an *OpeningError, not a panic.
func TestRevealNilClaims(t *testing.T) {
	for _, openings := range [][]Opening{nil, {{Field: "/settlement/payer", Value: "0x00", Salt: "AAAAAAAAAAAAAAAAAAAAAA"}}} {
		got, err := Reveal(nil, openings...)
		if got != nil || !errors.Is(err, ErrBadOpening) {
			t.Errorf("Reveal(nil, %d openings) = %v, %v; want nil and an error that is ErrBadOpening", len(openings), got, err)
		}
	}
}

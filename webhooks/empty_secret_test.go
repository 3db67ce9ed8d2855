package webhooks_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestVerifyRefusesEmptySecret: an empty secret (a receiver whose secret
// variable is unset) is no secret. Anyone can compute HMAC-SHA256 keyed with
// "", so a delivery signed that way must be ErrNoSecret, not accepted; a
// real secret beside an empty one still verifies.
func TestVerifyRefusesEmptySecret(t *testing.T) {
	now := time.Unix(1776086400, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"id":"evt_forged","type":"settlement.processed"}`)
	forged := webhooks.SignatureHeader(now.Unix(), body, "")
	for _, secrets := range [][]string{{""}, {"", ""}} {
		if err := webhooks.VerifyAt(now, secrets, forged, ts, body, 0); !errors.Is(err, webhooks.ErrNoSecret) {
			t.Errorf("VerifyAt(secrets %q) of a delivery signed with \"\" = %v, want ErrNoSecret", secrets, err)
		}
	}
	if err := webhooks.VerifyAt(now, []string{"", "whsec_test"}, forged, ts, body, 0); !errors.Is(err, webhooks.ErrSignatureMismatch) {
		t.Errorf("VerifyAt(\"\", whsec_test) of a delivery signed with \"\" = %v, want ErrSignatureMismatch", err)
	}
	good := webhooks.SignatureHeader(now.Unix(), body, "whsec_test")
	if err := webhooks.VerifyAt(now, []string{"", "whsec_test"}, good, ts, body, 0); err != nil {
		t.Errorf("VerifyAt(\"\", whsec_test) of a delivery signed with whsec_test = %v, want nil", err)
	}
}

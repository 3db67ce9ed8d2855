package httpserver_test

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/httpserver"
)

// TestOperatorChallengeNamesInvalidToken: the operator endpoints use the
// Bearer scheme, whose challenge says why a request that did carry a token
// failed: error="invalid_token" (RFC 6750 §3.1), so a scraper can tell a
// wrong operator key from a missing one; a request without credentials
// gets the bare challenge (RFC 6750 §3.1: no error code when the request
// lacks any authentication information).
func TestOperatorChallengeNamesInvalidToken(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	for _, path := range []string{"/metrics", "/v1/admin/backup"} {
		none := f.do("GET", path, "", nil)
		if c := none.header.Get("WWW-Authenticate"); none.status != 401 || !strings.HasPrefix(c, "Bearer ") || strings.Contains(c, "error=") {
			t.Errorf("%s without a token: %d, challenge %q; want 401 with a bare Bearer challenge", path, none.status, c)
		}
		wrong := f.do("GET", path, "", nil, "Authorization", "Bearer not-the-operator-key")
		if c := wrong.header.Get("WWW-Authenticate"); wrong.status != 401 || !strings.HasPrefix(c, "Bearer ") || !strings.Contains(c, `error="invalid_token"`) {
			t.Errorf("%s with a wrong token: %d, challenge %q; want 401 with error=\"invalid_token\"", path, wrong.status, c)
		}
	}
}

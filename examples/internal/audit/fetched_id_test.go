package audit

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// A receipt asked for by id (--server) must be that receipt: a server
// that answers GET /v1/receipts/A with receipt B, itself valid, has not
// shown receipt A to be valid, and "VERIFIED" with exit 0 would tell a
// script that it had.
func TestReceiptFetchedByIDIsTheOneAskedFor(t *testing.T) {
	w := getWorld(t)
	asked, served := idOfFile(t, w.receiptDE), idOfFile(t, w.receiptFR)
	if asked == served || asked == "" || served == "" {
		t.Fatalf("fixture: receipts %q and %q", asked, served)
	}
	body, _ := os.ReadFile(w.receiptFR)
	jwks, _ := os.ReadFile(w.jwks)
	logKey, _ := os.ReadFile(w.logFile)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/receipts/"):
			rw.Write(body) // whatever was asked for
		case r.URL.Path == "/.well-known/jwks.json":
			rw.Write(jwks)
		case r.URL.Path == "/.well-known/log-key":
			rw.Write(logKey)
		default:
			http.NotFound(rw, r)
		}
	}))
	defer srv.Close()

	// The honest case first: asking for the receipt served verifies.
	if code, out, errOut := w.run(t, "receipt", served, "--server", srv.URL, "-q"); code != ExitOK {
		t.Fatalf("receipt %s fetched by its id: exit %d\n%s%s", served, code, out, errOut)
	}
	code, out, errOut := w.run(t, "receipt", asked, "--server", srv.URL)
	if code != ExitFailed || strings.HasPrefix(out, "VERIFIED") || !strings.Contains(out, asked) || !strings.Contains(out, served) {
		t.Errorf("receipt %s asked for, %s served: exit %d, want %d, a verdict naming both\n%s%s", asked, served, code, ExitFailed, out, errOut)
	}
}

func idOfFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return idOf(raw)
}

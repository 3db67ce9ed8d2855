package main

import (
	"strings"
	"testing"
)

// The URLs the server prints (migrate's report, a refused -store, the
// refused receipt-key rotation) name the database without its secrets,
// wherever the URL carries them: libpq takes password and sslpassword as
// query parameters too (PostgreSQL documentation, "Connection URIs").
func TestRedactDropsEverySecretOfAStoreURL(t *testing.T) {
	secrets := []string{"userinfoSecret1", "querySecret2", "sslKeySecret3"}
	for _, u := range []string{
		"postgres://fiscal:" + secrets[0] + "@db.internal/fiscal402?sslmode=verify-full&password=" + secrets[1],
		"postgresql://db.internal:5433/fiscal402?sslpassword=" + secrets[2] + "&search_path=books&password=" + secrets[1],
	} {
		got := redact(u)
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("redact(%q) = %q: shows the secret %q", u, got, s)
			}
		}
		if !strings.Contains(got, "db.internal") || !strings.Contains(got, "/fiscal402") {
			t.Errorf("redact(%q) = %q: no longer names the database", u, got)
		}
	}
	if got := redact("postgres://db/x?search_path=books&sslmode=verify-full"); !strings.Contains(got, "search_path=books") || !strings.Contains(got, "sslmode=verify-full") {
		t.Errorf("redact drops harmless parameters: %q", got)
	}
	if got := redact("/srv/fiscal402/ledger.db"); got != "/srv/fiscal402/ledger.db" {
		t.Errorf("redact changes a file path: %q", got)
	}
}

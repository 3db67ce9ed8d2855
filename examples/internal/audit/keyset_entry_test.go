package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key set whose entry for the receipt's key cannot be used (its kid is
// not the thumbprint of its x, or the kid is listed twice) is the
// auditor's input at fault, as a key set that does not parse is: a usage
// problem (exit 2, the --jwks file named on stderr), not a receipt that
// failed a check (exit 1, "NOT VERIFIED"), whichever of the key set's
// entries is broken.
func TestKeySetEntryUnusableIsUsage(t *testing.T) {
	w := getWorld(t)
	raw, err := os.ReadFile(w.jwks)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("key set %s: %v", raw, err)
	}
	write := func(name string, keys []map[string]any) string {
		b, _ := json.Marshal(map[string]any{"keys": keys})
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	x, _ := base64.RawURLEncoding.DecodeString(set.Keys[0]["x"].(string))
	x[0] ^= 1
	other := map[string]any{}
	for k, v := range set.Keys[0] {
		other[k] = v
	}
	other["x"] = base64.RawURLEncoding.EncodeToString(x)
	notThumbprint := write("jwks-not-thumbprint.json", append([]map[string]any{other}, set.Keys[1:]...))
	twice := write("jwks-twice.json", append([]map[string]any{set.Keys[0]}, set.Keys...))

	db := filepath.Join(w.dir, "ledger.db")
	for _, jwks := range []string{notThumbprint, twice} {
		for _, args := range [][]string{{"receipt", w.receiptDE}, {"receipt", w.receiptV3}, {"ledger", db}} {
			var out, errOut bytes.Buffer
			code := Main(append(args, "--jwks", jwks, "--log-key-file", w.logFile), &out, &errOut)
			if code != ExitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), filepath.Base(jwks)) {
				t.Errorf("%s %s --jwks %s: exit %d, want %d with nothing on stdout and the key set named on stderr\nstdout: %s\nstderr: %s",
					args[0], filepath.Base(args[1]), filepath.Base(jwks), code, ExitUsage, out.String(), errOut.String())
			}
		}
	}
}

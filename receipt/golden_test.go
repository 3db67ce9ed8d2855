package receipt

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenSet is the fixed set of test vectors under testdata/: receipts made
// with fixed keys, a fixed clock and an in-memory log. They are the format's
// regression test (a receipt issued today must verify forever) and test
// vectors for other implementations (testdata/verify.mjs reads them).
type goldenSet struct {
	files map[string][]byte
}

const (
	sandboxOrigin = "ledger.example/fiscal402-sandbox"
)

func pendingClaims(n int) Claims {
	c := sampleClaims(n)
	c.ReviewStatus = ReviewPending
	c.ReviewReasons = []string{"consumer_country_missing: no attested customer country, VAT not determined"}
	c.Buyer = Buyer{}
	c.Classification = &Classification{Status: "manual_review", Reasons: []string{"place of supply unknown (Art. 58 needs the customer's location)"}}
	c.FX.NetEUR, c.FX.VATEUR = "", ""
	c.Settlement.Chain = ChainFacts{Verification: ChainNotPerformed}
	c.Invoice = nil
	return c
}

func sandboxClaims(n int) Claims {
	c := sampleClaims(n)
	c.Environment = EnvSandbox
	c.Watermark = SandboxWatermark
	c.Fee = nil
	return c
}

func buildGoldenSet(t testing.TB) goldenSet {
	t.Helper()
	f := newFixture(t)
	rs := f.issue(t, sampleClaims(0), sampleClaimsV2(1), pendingClaims(2))

	sb := newFixture(t)
	sbSigner, err := NewSigner(seedKey(2))
	if err != nil {
		t.Fatal(err)
	}
	sb.signer = sbSigner
	sb.keys = KeySet{Keys: []Key{mustKey(t, seedKey(2), fixedTime.Add(-24*time.Hour))}}
	sb.log = newMemLog(t, sandboxOrigin, 6)
	sandbox := sb.issue(t, withOrigin(sandboxClaims(3), sandboxOrigin))

	indent := func(v any) []byte {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	return goldenSet{files: map[string][]byte{
		"receipt-v1.json":         rs[0],
		"receipt-v2.json":         rs[1],
		"receipt-v1-pending.json": rs[2],
		"receipt-sandbox.json":    sandbox[0],
		"jwks.json":               indent(f.keys),
		"jwks-sandbox.json":       indent(sb.keys),
		"log.vkey":                []byte(f.log.vkey + "\n"),
		"log-sandbox.vkey":        []byte(sb.log.vkey + "\n"),
	}}
}

func withOrigin(c Claims, origin string) Claims {
	c.Log.Origin = origin
	return c
}

// TestGolden regenerates the vectors and compares them byte for byte:
// signing and assembling are deterministic, and the format must not drift.
func TestGolden(t *testing.T) {
	files := buildGoldenSet(t).files
	for _, name := range slices.Sorted(maps.Keys(files)) {
		golden(t, name, files[name])
	}
}

// goldenVectors are the expected outcomes of the files on disk, checked
// without regenerating anything.
var goldenVectors = []struct {
	receipt, jwks, vkey string
	step                string // "" = verifies
}{
	{"receipt-v1.json", "jwks.json", "log.vkey", ""},
	{"receipt-v2.json", "jwks.json", "log.vkey", ""},
	{"receipt-v1-pending.json", "jwks.json", "log.vkey", ""},
	{"receipt-sandbox.json", "jwks-sandbox.json", "log-sandbox.vkey", ""},
	{"receipt-sandbox.json", "jwks.json", "log-sandbox.vkey", StepKid},
	{"receipt-v1.json", "jwks-sandbox.json", "log.vkey", StepKid},
	{"receipt-v1.json", "jwks.json", "log-sandbox.vkey", StepCheckpointSignature},
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenVectorsVerify(t *testing.T) {
	for _, v := range goldenVectors {
		c, err := Verify(readTestdata(t, v.receipt), readTestdata(t, v.jwks), strings.TrimSpace(string(readTestdata(t, v.vkey))))
		if got := stepOf(err); got != v.step {
			t.Errorf("%s with %s: step %q, want %q (%v)", v.receipt, v.jwks, got, v.step, err)
			continue
		}
		if err == nil && strings.Contains(v.receipt, "sandbox") != (c.Environment == EnvSandbox && c.Watermark == SandboxWatermark) {
			t.Errorf("%s: environment %q watermark %q", v.receipt, c.Environment, c.Watermark)
		}
	}
}

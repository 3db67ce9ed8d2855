package receipt

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
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

// goldenV3 are the 3.0.0 vectors, each concealed with its own salt seed.
var goldenV3 = []struct {
	file, openings string // openings: "" = not written
	clear          func(int) Claims
	seed           byte
}{
	{"receipt-v3.json", "openings-v3.json", sampleClaimsV3Clear, 31},
	{"receipt-v3-b2b.json", "openings-v3-b2b.json", sampleClaimsV3B2BClear, 32},
	{"receipt-v3-uk.json", "", sampleClaimsV3UKClear, 33},
	{"receipt-v3-pending.json", "", pendingClaimsV3Clear, 34},
}

// goldenV4 are the 4.0.0 vectors, concealed like goldenV3.
var goldenV4 = []struct {
	file, openings string
	clear          func(int) Claims
	seed           byte
}{
	{"receipt-v4.json", "openings-v4.json", sampleClaimsV3Clear, 36},
	{"receipt-v4-uk.json", "", sampleClaimsV3UKClear, 37},
	{"receipt-v4-pending.json", "", pendingClaimsV3Clear, 38},
}

func buildGoldenSet(t testing.TB) goldenSet {
	t.Helper()
	f := newFixture(t)
	rs := f.issue(t, sampleClaims(0), sampleClaimsV2(1), pendingClaims(2))
	// The 3.0.0 vectors continue the same log (indexes 3 to 6) under a
	// later checkpoint, consistent with the first: one log, as an auditor
	// would see it over time.
	files := map[string][]byte{}
	var v3 []Claims
	for i, g := range goldenV3 {
		public, openings := conceal(t, g.clear(5+i), g.seed)
		v3 = append(v3, public)
		if g.openings != "" {
			files[g.openings] = append(mustIndentJSON(t, openings), '\n')
		}
	}
	for i, r := range f.issue(t, v3...) {
		files[goldenV3[i].file] = r
	}
	// The 4.0.0 vectors continue the log again (indexes 7 to 9), under a
	// checkpoint the receipt key cosigns: the same service after its
	// upgrade to 4.0.0.
	var v4 []Claims
	for i, g := range goldenV4 {
		public, openings := conceal(t, asV4(g.clear(10+i)), g.seed)
		v4 = append(v4, public)
		if g.openings != "" {
			files[g.openings] = append(mustIndentJSON(t, openings), '\n')
		}
	}
	for i, r := range f.issueV4(t, v4...) {
		files[goldenV4[i].file] = r
	}

	sb := newFixture(t)
	sbSigner, err := NewSigner(seedKey(2))
	if err != nil {
		t.Fatal(err)
	}
	sb.signer = sbSigner
	sb.keys = KeySet{Keys: []Key{mustKey(t, seedKey(2), fixedTime.Add(-24*time.Hour))}}
	sb.log = newMemLog(t, sandboxOrigin, 6)
	sandbox := sb.issue(t, withOrigin(sandboxClaims(3), sandboxOrigin))
	sbV3, _ := conceal(t, withOrigin(sandboxClaimsV3Clear(9), sandboxOrigin), 35)
	files["receipt-v3-sandbox.json"] = sb.issue(t, sbV3)[0]
	sbV4, _ := conceal(t, asV4(withOrigin(sandboxClaimsV3Clear(13), sandboxOrigin)), 39)
	files["receipt-v4-sandbox.json"] = sb.issueV4(t, sbV4)[0]

	indent := func(v any) []byte {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	for name, b := range map[string][]byte{
		"receipt-v1.json":         rs[0],
		"receipt-v2.json":         rs[1],
		"receipt-v1-pending.json": rs[2],
		"receipt-sandbox.json":    sandbox[0],
		"jwks.json":               indent(f.keys),
		"jwks-sandbox.json":       indent(sb.keys),
		"log.vkey":                []byte(f.log.vkey + "\n"),
		"log-sandbox.vkey":        []byte(sb.log.vkey + "\n"),
	} {
		files[name] = b
	}
	return goldenSet{files: files}
}

func sandboxClaimsV3Clear(n int) Claims {
	c := sampleClaimsV3Clear(n)
	c.Environment = EnvSandbox
	c.Watermark = SandboxWatermark
	c.Fee = nil
	return c
}

func mustIndentJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	openings            string // "" = none given
	step                string // "" = verifies
}{
	{"receipt-v1.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v2.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v1-pending.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-sandbox.json", "jwks-sandbox.json", "log-sandbox.vkey", "", ""},
	{"receipt-sandbox.json", "jwks.json", "log-sandbox.vkey", "", StepKid},
	{"receipt-v1.json", "jwks-sandbox.json", "log.vkey", "", StepKid},
	{"receipt-v1.json", "jwks.json", "log-sandbox.vkey", "", StepCheckpointSignature},
	{"receipt-v3.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v3.json", "jwks.json", "log.vkey", "openings-v3.json", ""},
	{"receipt-v3-b2b.json", "jwks.json", "log.vkey", "openings-v3-b2b.json", ""},
	{"receipt-v3-uk.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v3-pending.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v3-sandbox.json", "jwks-sandbox.json", "log-sandbox.vkey", "", ""},
	{"receipt-v3-sandbox.json", "jwks.json", "log.vkey", "", StepKid},
	{"receipt-v3.json", "jwks.json", "log.vkey", "openings-v3-b2b.json", StepOpening},
	{"receipt-v3.json", "jwks.json", "log-sandbox.vkey", "", StepCheckpointSignature},
	{"receipt-v4.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v4.json", "jwks.json", "log.vkey", "openings-v4.json", ""},
	{"receipt-v4-uk.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v4-pending.json", "jwks.json", "log.vkey", "", ""},
	{"receipt-v4-sandbox.json", "jwks-sandbox.json", "log-sandbox.vkey", "", ""},
	{"receipt-v4-sandbox.json", "jwks.json", "log-sandbox.vkey", "", StepKid},
	{"receipt-v4.json", "jwks-sandbox.json", "log.vkey", "", StepKid},
	{"receipt-v4.json", "jwks.json", "log-sandbox.vkey", "", StepCheckpointSignature},
	{"receipt-v4.json", "jwks.json", "log.vkey", "openings-v3.json", StepOpening},
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyVector verifies a golden vector as listed.
func verifyVector(t testing.TB, receipt, jwks, vkey, openings string) (*Claims, error) {
	t.Helper()
	var os []Opening
	if openings != "" {
		var err error
		if os, err = ParseOpenings(readTestdata(t, openings)); err != nil {
			t.Fatal(err)
		}
	}
	key := strings.TrimSpace(string(readTestdata(t, vkey)))
	v, err := NewVerifier(readTestdata(t, jwks), key)
	if err != nil {
		return nil, err
	}
	c, err := v.Verify(readTestdata(t, receipt), os...)
	if openings == "" {
		// The package-level Verify must reach the same verdict.
		c2, err2 := Verify(readTestdata(t, receipt), readTestdata(t, jwks), key)
		if stepOf(err2) != stepOf(err) || (err == nil && !reflect.DeepEqual(c, c2)) {
			t.Errorf("%s: Verify says %v, Verifier.Verify %v", receipt, err2, err)
		}
	}
	return c, err
}

func TestGoldenVectorsVerify(t *testing.T) {
	for _, v := range goldenVectors {
		c, err := verifyVector(t, v.receipt, v.jwks, v.vkey, v.openings)
		if got := stepOf(err); got != v.step {
			t.Errorf("%s with %s: step %q, want %q (%v)", v.receipt, v.jwks, got, v.step, err)
			continue
		}
		if err == nil && strings.Contains(v.receipt, "sandbox") != (c.Environment == EnvSandbox && c.Watermark == SandboxWatermark) {
			t.Errorf("%s: environment %q watermark %q", v.receipt, c.Environment, c.Watermark)
		}
	}
}

package receipt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestNodeVerifier runs testdata/verify.mjs, a second verifier that shares
// no code with this package (Node's built-in Ed25519 and SHA-256 only), on
// the golden vectors and on every sampled tamper case, and requires it to
// reach the same verdict, failing at the same step, as Verify.
func TestNodeVerifier(t *testing.T) {
	node := testtool.LookPath(t, "node")
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		testtool.Missing(t, "node", "node --version failed: "+err.Error())
	}
	if major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0], "v")); major < 18 {
		testtool.Missing(t, "node", "need Node.js >= 18 for Ed25519 JWK import, have "+strings.TrimSpace(string(out)))
	}

	type nodeCase struct {
		Name     string `json:"name"`
		Receipt  []byte `json:"receipt"` // base64 in JSON
		JWKS     []byte `json:"jwks"`
		VKey     string `json:"vkey"`
		Openings []byte `json:"openings,omitempty"`
		step     string
	}
	var cases []nodeCase
	for _, v := range goldenVectors {
		c := nodeCase{
			Name: v.receipt + " with " + v.jwks + " and " + v.vkey, Receipt: readTestdata(t, v.receipt),
			JWKS: readTestdata(t, v.jwks), VKey: strings.TrimSpace(string(readTestdata(t, v.vkey))), step: v.step,
		}
		if v.openings != "" {
			c.Name += " opened by " + v.openings
			c.Openings = readTestdata(t, v.openings)
		}
		cases = append(cases, c)
	}
	for _, s := range []*tamperSet{newTamperSet(t), newTamperSetV3(t)} {
		for _, tc := range s.cases(t, 7) {
			cases = append(cases, nodeCase{Name: s.version + " " + tc.name, Receipt: tc.receipt, JWKS: tc.jwks, VKey: tc.vkey, Openings: tc.openings, step: tc.step})
		}
	}
	v4 := newTamperSetV4(t)
	v4Cases, goOnly := v4.casesV4(t, 7)
	for _, tc := range v4Cases {
		if !goOnly[tc.name] {
			cases = append(cases, nodeCase{Name: "v4 " + tc.name, Receipt: tc.receipt, JWKS: tc.jwks, VKey: tc.vkey, Openings: tc.openings, step: tc.step})
		}
	}
	// Verify itself must agree with the expectation, or the comparison
	// below would compare two wrong answers.
	for _, c := range cases {
		var os []Opening
		if c.Openings != nil {
			var err error
			if os, err = ParseOpenings(c.Openings); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		v, err := NewVerifier(c.JWKS, c.VKey)
		if err == nil {
			_, err = v.Verify(c.Receipt, os...)
		}
		if stepOf(err) != c.step {
			t.Fatalf("%s: Go verifier says %q, want %q (%v)", c.Name, stepOf(err), c.step, err)
		}
	}

	file := filepath.Join(t.TempDir(), "cases.json")
	if err := writeJSONFile(file, cases); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "verify.mjs"), "--cases", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v\n%s", err, stderr.Bytes())
	}
	type result struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		Step  string `json:"step"`
		Error string `json:"error"`
	}
	var results []result
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("node output %q: %v", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != len(cases) {
		t.Fatalf("node answered %d of %d cases", len(results), len(cases))
	}
	passed := 0
	for i, c := range cases {
		r := results[i]
		switch {
		case r.Name != c.Name:
			t.Errorf("case %d: node answered for %q", i, r.Name)
		case c.step == "" && !r.OK:
			t.Errorf("%s: node rejects a valid receipt at %s: %s", c.Name, r.Step, r.Error)
		case c.step != "" && r.OK:
			t.Errorf("%s: node accepts a receipt Go rejects at %s", c.Name, c.step)
		case c.step != "" && r.Step != c.step:
			t.Errorf("%s: node fails at %q (%s), Go at %q", c.Name, r.Step, r.Error, c.step)
		default:
			passed++
		}
	}
	t.Logf("node %s agreed with Verify on %d of %d cases", strings.TrimSpace(string(out)), passed, len(cases))
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

package ubl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// Conformance of the goldens with testdata/conformance/validate-ubl:
//
//   - xsd: OASIS UBL 2.1 schemas (xmllint), always; strict in CI.
//   - en16931: CEN EN 16931 schematron 1.3.16, all goldens, when EN16931_XSLT
//     names the compiled artefact; skipped with a message otherwise.
//   - peppol: Peppol BIS Billing 3.0.21, the B2B (ProfilePeppol) goldens,
//     when PEPPOL_XSLT is set; skipped with a message otherwise.
//
// Each layer is one validate-ubl call for all its files (one JVM). The test
// fails on any XSD error or fatal assertion, and also on warnings: the
// goldens are meant to be clean, so a new warning is a regression to look at.

func TestGoldenConformance(t *testing.T) {
	var all, peppol []string
	for _, gc := range goldenCases() {
		f, err := filepath.Abs(filepath.Join(goldenDir, gc.Name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f)
		if gc.Peppol {
			peppol = append(peppol, f)
		}
	}
	t.Run("xsd", func(t *testing.T) {
		runValidateUBL(t, all, "", "")
	})
	t.Run("en16931", func(t *testing.T) {
		x := schematronLayer(t, "EN16931_XSLT", "the CEN EN 16931 layer")
		runValidateUBL(t, all, x, "")
	})
	t.Run("peppol", func(t *testing.T) {
		x := schematronLayer(t, "PEPPOL_XSLT", "the Peppol BIS 3.0 layer")
		runValidateUBL(t, peppol, "", x)
	})
}

// schematronLayer returns the compiled schematron named by env, or skips:
// these artefacts cannot be downloaded in CI, so their absence is not a
// failure even under FISCAL402_STRICT=1 (the XSD layer is the strict part).
func schematronLayer(t *testing.T, env, what string) string {
	t.Helper()
	x := os.Getenv(env)
	if x == "" {
		t.Skipf("skipping %s: %s not set (see testdata/conformance/SOURCES.md)", what, env)
	}
	testtool.LookPath(t, "java")
	testtool.File(t, "Saxon-HE", saxonJar())
	return testtool.File(t, what, x)
}

func saxonJar() string {
	if j := os.Getenv("SAXON_JAR"); j != "" {
		return j
	}
	return "/usr/share/java/Saxon-HE.jar"
}

// runValidateUBL runs validate-ubl with exactly the given layers and fails
// the test on any finding.
func runValidateUBL(t *testing.T, files []string, en16931, peppol string) {
	t.Helper()
	out, exit := validateUBL(t, files, en16931, peppol)
	if exit != 0 || out != "" {
		t.Errorf("validate-ubl found problems (exit %d):\n%s", exit, out)
		return
	}
	t.Logf("validate-ubl: %d files, no findings", len(files))
}

// validateUBL runs testdata/conformance/validate-ubl and returns its report
// (stdout) and exit code; an environment problem (exit 2) fails the test.
func validateUBL(t *testing.T, files []string, en16931, peppol string) (string, int) {
	t.Helper()
	testtool.LookPath(t, "xmllint")
	script := testtool.File(t, "validate-ubl", testtool.Conformance(t, "validate-ubl"))
	cmd := exec.Command(script, files...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EN16931_XSLT=") && !strings.HasPrefix(kv, "PEPPOL_XSLT=") {
			env = append(env, kv)
		}
	}
	if en16931 != "" {
		env = append(env, "EN16931_XSLT="+en16931)
	}
	if peppol != "" {
		env = append(env, "PEPPOL_XSLT="+peppol)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("validate-ubl: %v", err)
		}
		code = exit.ExitCode()
	}
	if code == 2 {
		t.Fatalf("validate-ubl could not run (exit 2):\n%s", stderr.String())
	}
	return strings.TrimSpace(stdout.String()), code
}

// TestValidateUBLHarnessFails makes sure the conformance harness can fail:
// a golden with two elements swapped must be reported by the XSD layer.
func TestValidateUBLHarnessFails(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(goldenDir, "s-b2c-de-19.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const a, b = "  <cbc:ID>x402-de19</cbc:ID>\n", "  <cbc:IssueDate>2026-11-20</cbc:IssueDate>\n"
	if !bytes.Contains(good, []byte(a+b)) {
		t.Fatal("golden s-b2c-de-19 no longer has the expected ID/IssueDate lines")
	}
	bad := filepath.Join(t.TempDir(), "swapped.xml")
	if err := os.WriteFile(bad, bytes.Replace(good, []byte(a+b), []byte(b+a), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, exit := validateUBL(t, []string{bad}, "", "")
	if exit != 1 || !strings.Contains(out, "[fatal] XSD") {
		t.Fatalf("validate-ubl accepted an invalid document (exit %d): %s", exit, out)
	}
}

// TestSchemeRulesAgainstPeppol renders each identifier of schemeCases as the
// buyer's legal identifier, bypassing the renderer's own check, and runs the
// Peppol layer over all of them in one call: the artefact must accept
// exactly the identifiers the Go ports accept. Skipped without PEPPOL_XSLT.
func TestSchemeRulesAgainstPeppol(t *testing.T) {
	x := schematronLayer(t, "PEPPOL_XSLT", "the Peppol BIS 3.0 layer")
	dir := t.TempDir()
	var files []string
	for i, tc := range schemeCases {
		p, err := prepare(ptr(b2b("x", sellerIE, buyerDEBusiness, line("x", "10.00", "AE", "0"))), nil)
		if err != nil {
			t.Fatal(err)
		}
		p.inv.Buyer.LegalID, p.inv.Buyer.LegalIDScheme = tc.id, tc.scheme
		out, err := p.render()
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("%02d.xml", i))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	report, _ := validateUBL(t, files, "", x)
	for i, tc := range schemeCases {
		r, _ := schemeRuleFor(tc.scheme)
		var findings []string
		for _, l := range strings.Split(report, "\n") {
			if strings.HasPrefix(l, files[i]+":") {
				findings = append(findings, l)
			}
		}
		rejected := len(findings) > 0
		if rejected == tc.ok {
			t.Errorf("%s %q: Go port says valid=%v, the Peppol artefact says %q", tc.scheme, tc.id, tc.ok, findings)
		}
		// Some of these rules are warnings in Peppol (R044, R045, R047,
		// R054, R056-1); the renderer rejects them all the same.
		if rejected && !strings.Contains(findings[0], "] "+r.rule+":") {
			t.Errorf("%s %q: rejected by %q, want %s", tc.scheme, tc.id, findings, r.rule)
		}
	}
}

func ptr[T any](v T) *T { return &v }

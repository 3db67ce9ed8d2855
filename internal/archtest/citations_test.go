package archtest

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notPublic matches pointers to reference notes that live beside the
// repository and are not published with it: the research notes, the design
// page and the shared data and conformance directories. A comment, README
// or test that relies on one of them must cite the public source the note
// relied on (an EUR-Lex article with its URL, an official page, a published
// specification with its section) or state our own decision itself.
var notPublic = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`research/`,
	`\bresearch\s+(§|section|x402|ledger|vat|ubl)`,
	`\(research[:)]`,
	`\b(vat|ubl|peers|style)\.md\b`,
	`x402-evm(-e2e)?\.(md|py)`,
	`ledger-receipt-fx-webhooks`,
	`DESIGN\.md`,
	`(?-i:\bDESIGN\s*("|:))`,
	`\.\./shared\b`,
	`\bshared/(data|conformance|research|spec)\b`,
	`service-spec\.md`,
	// The service specification itself, in the forms the repository used
	// to cite it ("service-spec §9", "service spec section 1", "(spec)",
	// "where the spec is silent", "the spec's order"; a bare "spec §8" is
	// privateSpec's). A published specification is named with its own
	// name ("x402 spec v2 §5.3.2", "RFC 9110 §15.6", "the OpenAPI
	// document"), which these do not match.
	`\bservice[- ]spec(ification)?\b`,
	`\s\(spec(\)|\s*$)`,
	`\bthe spec('s)?\s+(order|wording|words|table|is silent|says|leaves)\b`,
	`\bspecification('s)?\s+(table|is silent|says|leaves)\b`,
	`\b(against|of) the specification\s+\(§`,
	`\bspecification's endpoints\b`,
}, "|"))

// privateSpec matches "spec §N" and "spec section N": a section of the
// service specification, which is not published with the repository. A
// published specification is cited with its name in front ("x402 spec §5",
// "C2SP spec §2"); publicSpecName recognises those names, so only a bare
// "spec §" is reported.
var (
	privateSpec    = regexp.MustCompile(`(?i)\bspec('s)?\s+(§|section\b)`)
	publicSpecName = regexp.MustCompile(`(?i)\b(x402|c2sp|openapi|json-rpc|caip-?\d*|eip-?\d+|erc-?\d+|a2a|ubl|peppol|w3c|csp|ecma(script)?|scheme_exact_evm(\.md)?)\s+$`)
)

// privateCitation returns the first pointer of line to a reference note or
// to the unpublished service specification, or "".
func privateCitation(line string) string {
	if m := notPublic.FindString(line); m != "" {
		return m
	}
	for _, loc := range privateSpec.FindAllStringIndex(line, -1) {
		if !publicSpecName.MatchString(line[:loc[0]]) {
			return line[loc[0]:loc[1]]
		}
	}
	return ""
}

// citationExempt are the files that name those pointers on purpose: the rate
// generator refuses them as sources (and its tests feed them in), CI runs the
// tests in a copy with nothing beside it, and this test.
var citationExempt = map[string]bool{
	"vat/internal/ratesgen/ratesgen.go":      true,
	"vat/internal/ratesgen/ratesgen_test.go": true,
	"vat/ratefile_test.go":                   true, // a rate table file citing one is refused
	".ci/run":                                true,
	"internal/archtest/citations_test.go":    true,
}

// TestNoPrivateCitations: no source, document or test file of the repository
// cites a file outside it as its source. The repository stands alone.
func TestNoPrivateCitations(t *testing.T) {
	root := "../.."
	exts := map[string]bool{".go": true, ".md": true, ".txt": true, ".json": true, ".csv": true, ".sh": true, ".yaml": true, ".yml": true, "": true}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "fuzz" {
				return filepath.SkipDir
			}
			return nil
		}
		if citationExempt[rel] || !exts[filepath.Ext(path)] {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err // data files of that size are not documents
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for n := 1; sc.Scan(); n++ {
			if m := privateCitation(sc.Text()); m != "" {
				t.Errorf("%s:%d cites %q, a file that is not published with the repository: cite the public source it relied on", rel, n, m)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPrivateCitationPatterns pins what the guard reports and what it lets
// through: the private specification's own forms are reported; a published
// specification named in front of its section, and the word "spec" in
// other senses, are not.
func TestPrivateCitationPatterns(t *testing.T) {
	for _, line := range []string{
		"// Fee is the fee (spec §8).",
		"// Pricing is the pricing policy (Spec §8).",
		`Resolution: "Spec §5.2 leaves open whether the header is optional"`,
		"// version (service-spec §9); fields are deprecated",
		"// Jurisdictions (service spec section 1).",
		"// Listing limits (spec section 4).",
		"// Code is an error code of the service specification (§7).",
		"// the Listing (spec) rules",
		"// CapabilityCheckRequest is the body of POST /v1/capabilities/check (spec",
		"// capabilityTable is the list, in the spec's order.",
		"- **Authentication where the spec is silent** (§5.7, §5.8)",
		"// are in the specification's table (§2.3)",
		"// checks it against the specification (§1 conventions,",
		"// New returns the handler serving the specification's endpoints",
		"// also settles spec §5.2: the key is required",
	} {
		if privateCitation(line) == "" {
			t.Errorf("not reported: %q", line)
		}
	}
	for _, line := range []string{
		`return badRequest("/settleResponse/success", "is required (x402 spec v2 §5.3.2)")`,
		"// (x402 spec §5.3.2)",
		"// a C2SP spec §2 checkpoint",
		"// the OpenAPI spec section on examples",
		"// RFC 9110 §15.6; JSON-RPC 2.0 §5.1",
		"// inspect the response; respect the limits",
		"	if receipt.ConcealedSpec(spec) {",
		"	c, err := decodePayload(parts.payload, spec)",
		"// the record's receipt.spec is the spec of its version",
		"// No extension lines (the spec calls them NOT RECOMMENDED).",
		"// refScan is the specification of Scan over sorted keys.",
	} {
		if m := privateCitation(line); m != "" {
			t.Errorf("reported %q in %q, which cites nothing private", m, line)
		}
	}
}

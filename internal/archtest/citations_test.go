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
}, "|"))

// citationExempt are the files that name those pointers on purpose: the rate
// generator refuses them as sources (and its tests feed them in), CI runs the
// tests in a copy with nothing beside it, and this test.
var citationExempt = map[string]bool{
	"vat/internal/ratesgen/ratesgen.go":      true,
	"vat/internal/ratesgen/ratesgen_test.go": true,
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
			if m := notPublic.FindString(sc.Text()); m != "" {
				t.Errorf("%s:%d cites %q, a file that is not published with the repository: cite the public source it relied on", rel, n, m)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

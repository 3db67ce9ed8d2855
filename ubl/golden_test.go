package ubl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.{json,xml} from the renderer")

const goldenDir = "testdata/golden"

// goldenInput is the JSON written beside each golden XML: the exact input.
type goldenInput struct {
	Description string
	Peppol      bool `json:",omitempty"`
	Invoice     *Invoice
	CreditNote  *CreditNote `json:",omitempty"`
}

func (gc goldenCase) input() goldenInput {
	return goldenInput{Description: gc.Description, Peppol: gc.Peppol, Invoice: gc.Invoice, CreditNote: gc.CreditNote}
}

func (in goldenInput) render() ([]byte, error) {
	if in.CreditNote != nil {
		return RenderCreditNote(*in.CreditNote)
	}
	return RenderInvoice(*in.Invoice)
}

func TestGolden(t *testing.T) {
	cases := goldenCases()
	if len(cases) < 16 {
		t.Fatalf("%d golden cases, the contract asks for at least 16", len(cases))
	}
	seen := map[string]bool{}
	for _, gc := range cases {
		if seen[gc.Name] {
			t.Fatalf("duplicate golden name %q", gc.Name)
		}
		seen[gc.Name] = true
		t.Run(gc.Name, func(t *testing.T) {
			out, err := gc.input().render()
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			in, err := json.MarshalIndent(gc.input(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, '\n')
			xmlPath := filepath.Join(goldenDir, gc.Name+".xml")
			jsonPath := filepath.Join(goldenDir, gc.Name+".json")
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, xmlPath, out)
				writeFile(t, jsonPath, in)
				return
			}
			compareFile(t, xmlPath, out)
			compareFile(t, jsonPath, in)
		})
	}
	if *update {
		removeStale(t, seen)
	}
}

// TestGoldenInputsRoundTrip renders every golden from its JSON file, so the
// JSON beside each XML is a faithful, reusable input (e.g. for the engine's
// tests) and not just a description.
func TestGoldenInputsRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if len(files) == 0 {
		t.Fatal("no golden inputs; run go test -run TestGolden -update")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var in goldenInput
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out, err := in.render()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".xml")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("%s: rendering the JSON input does not reproduce the golden XML", f)
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func compareFile(t *testing.T, path string, got []byte) {
	t.Helper()
	testtool.Golden(t, path, got, false)
}

func removeStale(t *testing.T, keep map[string]bool) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*"))
	for _, f := range files {
		base := filepath.Base(f)
		name := strings.TrimSuffix(strings.TrimSuffix(base, ".xml"), ".json")
		if !keep[name] && slices.Contains([]string{".xml", ".json"}, filepath.Ext(base)) {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
}

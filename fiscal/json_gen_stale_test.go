package fiscal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fiscal402/fiscal402/internal/jsongen"
)

// TestJSONGenerated fails when json_gen.go or its bootstrap is not what
// the generator writes for fiscal's types now (a field added, a tag
// changed): run go generate ./fiscal.
func TestJSONGenerated(t *testing.T) {
	for _, tg := range jsongen.Targets() {
		if filepath.Dir(tg.File) != "fiscal" {
			continue
		}
		enc, boot, err := jsongen.Generate(tg)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string][]byte{tg.File: enc, tg.Bootstrap: boot} {
			got, err := os.ReadFile(filepath.Join("..", name))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale (%v): go generate ./fiscal", name, err)
			}
		}
		return
	}
	t.Fatal("no jsongen target writes fiscal's encoder")
}

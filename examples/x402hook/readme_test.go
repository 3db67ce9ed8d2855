package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEQuotesGlue: every Go block of this example's README is code of
// sdkglue.go or main.go (compared line by line, indentation aside), so the
// glue a reader copies calls the library as it is. The README showed an
// older API (engine.EnqueueX402 with positional documents,
// engine.RunIngestQueue, errors.Is against a new *fiscal.Error, which is
// never true) that no longer exists.
func TestREADMEQuotesGlue(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range []string{"sdkglue.go", "main.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.WriteString(normalise(string(b)))
	}
	blocks := strings.Split(string(readme), "```go\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go block")
	}
	for _, b := range blocks {
		code := b[:strings.Index(b, "```")]
		if !strings.Contains(src.String(), normalise(code)) {
			t.Errorf("README.md quotes Go that is in neither sdkglue.go nor main.go:\n%s", code)
		}
	}
}

// normalise drops each line's indentation and blank lines.
func normalise(s string) string {
	var out strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

package fx

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:generate go run ./internal/genecb -src data/ecb-eurusd.csv

// embeddedCSV is data/ecb-eurusd.csv (data/SOURCE.md says where it comes
// from; embedded_gen.go records its hash and provenance). A string, so that
// nothing can modify it.
//
//go:embed data/ecb-eurusd.csv
var embeddedCSV string

// Embedded returns the ECB USD-per-EUR series compiled into the package
// (1999-01-04 to 2026-04-13 in this snapshot; Range tells). Every
// rate records EmbeddedSnapshot. Each call parses the data afresh (about a
// millisecond) and returns an independent table: call it once at start-up
// and keep the table. Settlements dated after its last publication need
// newer rates (LoadFile, Fetch, Merge); until then they fail with
// ErrNotYetPublished.
func Embedded() (*Table, error) {
	t, err := ParseCSV(strings.NewReader(embeddedCSV), EmbeddedSnapshot)
	if err != nil {
		return nil, fmt.Errorf("fx: embedded data: %w", err)
	}
	return t, nil
}

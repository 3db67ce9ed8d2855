package httpserver

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/returns"
)

// TestCSVExamplesFollowTheirHeaders: the OpenAPI document's examples of
// the CSV answers have the header the code writes and as many columns in
// every row. The example of the return's CSV had lost the rateType column
// when the return gained it, and no test noticed.
func TestCSVExamplesFollowTheirHeaders(t *testing.T) {
	for _, c := range []struct {
		name, example string
		header        []string
	}{
		{"return", exampleReturnCSV, returns.CSVHeader},
		{"records", exampleRecordsCSV, returns.RecordsCSVHeader},
		{"export", exampleExportCSV, returns.ExportCSVHeader},
	} {
		rows, err := csv.NewReader(strings.NewReader(c.example)).ReadAll()
		if err != nil {
			t.Errorf("%s example: %v", c.name, err)
			continue
		}
		if len(rows) < 2 || !slices.Equal(rows[0], c.header) {
			t.Errorf("%s example header %v, want %v", c.name, rows[0], c.header)
		}
	}
}

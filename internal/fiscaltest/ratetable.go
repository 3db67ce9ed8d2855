package fiscaltest

import (
	"encoding/json"
	"testing"

	"github.com/fiscal402/fiscal402/vat"
)

// RateTableFile is the embedded VAT rate table written as a table file
// (vat.RateTable.File) after edit changed its generic form (version,
// coverage, rows): TEST DATA, whose added rows cite made-up sources.
func RateTableFile(t testing.TB, edit func(doc map[string]any)) []byte {
	t.Helper()
	b, err := vat.Rates().File()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	edit(d)
	if b, err = json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	return b
}

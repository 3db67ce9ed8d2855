package invoicing_test

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummaryMentionNamesItsLines: an Irish seller crosses the Art. 59c
// threshold within April: its first sale to a German consumer is taxed at
// origin (Irish VAT, "Place of supply: IE (Art. 59c ...)"), the later
// ones in Germany under the OSS at 19 %. The summary has a 23 % line and a
// 19 % line, and its one note (PEPPOL-EN16931-R002) stated the mention
// for the whole invoice, so that it named Ireland as the place of supply
// of the German line too (Art. 58, 226(11a) Directive 2006/112/EC). A
// mention that applies to some lines only names them: the Irish line, not
// the German.
func TestSummaryMentionNamesItsLines(t *testing.T) {
	c, b, recs, wallet := crossingMonth(t, "DE")
	ctx := context.Background()
	origin, oss := recs[0].Classification, recs[2].Classification
	if origin.InvoiceNote == "" || oss.InvoiceNote == origin.InvoiceNote || origin.RatePercent.Decimal().Equal(oss.RatePercent.Decimal()) {
		t.Fatalf("supplies %q at %v and %q at %v: the test needs a mention on one rate's supplies only", origin.InvoiceNote, origin.RatePercent, oss.InvoiceNote, oss.RatePercent)
	}
	c.set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	res, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-04", Buyer: wallet})
	if err != nil {
		t.Fatal(err)
	}
	_, u, err := invoicing.Summary(ctx, b, res.Summary.ID)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "summary.xml")
	if err := os.WriteFile(file, u, 0o600); err != nil {
		t.Fatal(err)
	}
	fiscaltest.ValidateUBL(t, []string{file}, false)
	var doc struct {
		Note  string `xml:"Note"`
		Lines []struct {
			ID      string `xml:"ID"`
			Percent string `xml:"Item>ClassifiedTaxCategory>Percent"`
		} `xml:"InvoiceLine"`
	}
	if err := xml.Unmarshal(u, &doc); err != nil {
		t.Fatal(err)
	}
	var originLine, ossLine string
	for _, l := range doc.Lines {
		switch l.Percent {
		case origin.RatePercent.Decimal().String():
			originLine = l.ID
		case oss.RatePercent.Decimal().String():
			ossLine = l.ID
		}
	}
	if originLine == "" || ossLine == "" {
		t.Fatalf("lines %+v; want one at %v and one at %v", doc.Lines, origin.RatePercent, oss.RatePercent)
	}
	at := strings.Index(doc.Note, origin.InvoiceNote)
	if at < 0 {
		t.Fatalf("the note lacks the mention %q: %s", origin.InvoiceNote, doc.Note)
	}
	after := doc.Note[at+len(origin.InvoiceNote):]
	if !strings.HasPrefix(after, " (invoice line "+originLine+")") {
		t.Errorf("the mention %q does not name the line %s it applies to (line %s is taxed in Germany): %s", origin.InvoiceNote, originLine, ossLine, doc.Note)
	}
}

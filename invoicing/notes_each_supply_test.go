package invoicing_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummaryStatesEverySupplysMention: a summary invoice says what the
// invoice of each supply it covers must say. An Irish seller below the
// Art. 59c threshold taxes its first sale of the month to a German
// consumer at origin (Irish VAT, mention "Place of supply: IE (Art. 59c
// ...)"); the next sale takes it over the threshold and is taxed in
// Germany under the OSS, whose invoicing rules are Ireland's too: both are
// on the month's Irish summary, one line each. A review found the
// summary's note taking the mention of its latest supply alone, so the
// Irish line lost the mention its per-payment invoice states, and the
// invoice's basis (Art. 219a) was the latest's alone. Every supply's
// mention is stated, once each, and every basis.
func TestSummaryStatesEverySupplysMention(t *testing.T) {
	c, b, recs, wallet := crossingMonth(t, "DE")
	ctx := context.Background()
	var notes []string
	for _, r := range recs {
		if n := r.Classification.InvoiceNote; n != "" && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	if recs[0].Classification.TaxingCountry == recs[2].Classification.TaxingCountry || len(notes) == 0 || recs[0].Classification.InvoiceNote == recs[2].Classification.InvoiceNote {
		t.Fatalf("supplies taxed in %s (%q) and %s (%q): the test needs a mention the latest supply does not carry",
			recs[0].Classification.TaxingCountry, recs[0].Classification.InvoiceNote, recs[2].Classification.TaxingCountry, recs[2].Classification.InvoiceNote)
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
	if len(res.Summary.Totals) != 2 {
		t.Fatalf("totals %+v; want one line per state's rate", res.Summary.Totals)
	}
	// The invoice's basis (the reference the entry states, Art. 219a)
	// names each rule by which a supply reached the state's rules.
	var bases []string
	for _, r := range []*fiscal.Record{recs[0], recs[2]} {
		_, ref, _ := b.InvoiceFrame(r, c.now())
		bases = append(bases, ref.TaxBasis)
		if !strings.Contains(res.Summary.Invoice.TaxBasis, ref.TaxBasis) {
			t.Errorf("the summary's basis %q does not name the basis %q of the supply of %s", res.Summary.Invoice.TaxBasis, ref.TaxBasis, r.Classification.SupplyDate)
		}
	}
	if bases[0] == bases[1] {
		t.Fatalf("both supplies reached the rules by %q: the test needs two bases", bases[0])
	}
	for _, n := range notes {
		if got := strings.Count(string(u), n); got != 1 {
			t.Errorf("the summary states the mention %q %d times; want once:\n%s", n, got, u)
		}
	}
}

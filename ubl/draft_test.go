package ubl

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestDraftFinishMatchesRender: for every golden, a draft finished with the
// golden's number is byte-identical to the rendered golden, and its totals
// are the invoice's.
func TestDraftFinishMatchesRender(t *testing.T) {
	for _, gc := range goldenCases() {
		want, err := gc.input().render()
		if err != nil {
			t.Fatal(err)
		}
		d, id := draftGolden(t, gc)
		got, err := d.Finish(id)
		if err != nil {
			t.Fatalf("%s: %v", gc.Name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: finished draft differs:\n%s", gc.Name, firstDiff(got, want))
		}
		if gc.Invoice != nil {
			tot, _ := gc.Invoice.Totals()
			if !d.Totals().Tax.Equal(tot.Tax) || !d.Totals().TaxInclusive.Equal(tot.TaxInclusive) {
				t.Errorf("%s: draft totals differ", gc.Name)
			}
		}
	}
}

// draftGolden drafts a golden without its number, which it returns.
func draftGolden(t *testing.T, gc goldenCase) (*Draft, string) {
	t.Helper()
	var d *Draft
	var id string
	var err error
	if gc.CreditNote != nil {
		cn := *gc.CreditNote
		id, cn.ID = cn.ID, ""
		d, err = DraftCreditNote(cn)
	} else {
		inv := *gc.Invoice
		id, inv.ID = inv.ID, ""
		d, err = DraftInvoice(inv)
	}
	if err != nil {
		t.Fatalf("%s: %v", gc.Name, err)
	}
	return d, id
}

func TestDraftChecksTheNumber(t *testing.T) {
	inv := b2c("", "DE", "19", "100.00")
	d, err := DraftInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want wantProblem
	}{
		{"", wantProblem{"ID", "BR-02", ErrRequired}},
		{"F402 2026\n1", wantProblem{"ID", "BR-02", ErrFormat}},
		{"F402-\x00", wantProblem{"ID", "", ErrXMLChar}},
	} {
		out, err := d.Finish(tc.id)
		expectProblem(t, out, err, tc.want)
	}
	// Markup in a number is escaped, as RenderInvoice escapes it.
	out, err := d.Finish("F402<&>1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("<cbc:ID>F402&lt;&amp;&gt;1</cbc:ID>")) {
		t.Error("number not escaped")
	}
	// A draft has no number of its own.
	inv.ID = "x"
	_, err = DraftInvoice(inv)
	expectProblem(t, nil, err, wantProblem{"ID", "", ErrForbidden})

	// Greek sellers: GR-R-001 runs on the number given to Finish.
	gr := grB2B("")
	d, err = DraftInvoice(gr)
	if err != nil {
		t.Fatal(err)
	}
	out, err = d.Finish("F402-2026-000130")
	expectProblem(t, out, err, wantProblem{"ID", "GR-R-001-1", ErrFormat})
	if _, err := d.Finish(grID); err != nil {
		t.Errorf("Greek number rejected: %v", err)
	}
}

// TestDraftTake: for every golden, Take gives the rendered golden; a
// number refused, or too long for the room the renderer left, leaves the
// draft untaken; after a Take, Finish and Take give new documents with
// their own numbers (short, long, escaped, one too long for the room) and
// never change the one taken.
func TestDraftTake(t *testing.T) {
	for _, gc := range goldenCases() {
		// render renders the golden numbered n, as a draft must give it
		// (nil: refused, as a Greek seller's rules refuse most numbers).
		render := func(n string) []byte {
			var out []byte
			var err error
			if gc.CreditNote != nil {
				cn := *gc.CreditNote
				cn.ID = n
				out, err = RenderCreditNote(cn)
			} else {
				inv := *gc.Invoice
				inv.ID = n
				out, err = RenderInvoice(inv)
			}
			if err != nil {
				return nil
			}
			return out
		}
		d, id := draftGolden(t, gc)
		if out, err := d.Take(""); err == nil || out != nil {
			t.Fatalf("%s: Take of an empty number: %v", gc.Name, err)
		}
		// A first number longer than the room left is copied, as Finish
		// copies, and leaves the draft untaken.
		long := id + strings.Repeat("-9", cap(d.xml)) // beyond any room left
		got, err := d.Take(long)
		if w := render(long); (err != nil) != (w == nil) || err == nil && (!bytes.Equal(got, w) || &got[0] == &d.xml[0]) {
			t.Fatalf("%s: Take of a number longer than the room: %v, or not the rendered document in a copy", gc.Name, err)
		}
		if d.taken {
			t.Fatalf("%s: a number longer than the room took the draft", gc.Name)
		}
		taken, err := d.Take(id)
		if err != nil {
			t.Fatalf("%s: %v", gc.Name, err)
		}
		want := render(id)
		if !bytes.Equal(taken, want) {
			t.Fatalf("%s: taken draft differs:\n%s", gc.Name, firstDiff(taken, want))
		}
		for _, n := range []string{"1", id + "0", "F402<&>1", long, id} {
			for name, f := range map[string]func(string) ([]byte, error){"Finish": d.Finish, "Take": d.Take} {
				got, err := f(n)
				w := render(n)
				if w == nil || err != nil {
					if (w == nil) != (err != nil) {
						t.Errorf("%s: %s(%q) after Take: %v, rendering refused it: %t", gc.Name, name, n, err, w == nil)
					}
					continue
				}
				if !bytes.Equal(got, w) {
					t.Errorf("%s: %s(%q) after Take differs:\n%s", gc.Name, name, n, firstDiff(got, w))
				}
				if &got[0] == &taken[0] {
					t.Errorf("%s: %s(%q) after Take reuses the taken document", gc.Name, name, n)
				}
			}
		}
		if !bytes.Equal(taken, want) {
			t.Errorf("%s: the taken document changed", gc.Name)
		}
	}
}

// TestDraftConcurrentFinish: Finish does not change the draft; concurrent
// Finish calls with different numbers do not interfere (run with -race).
func TestDraftConcurrentFinish(t *testing.T) {
	d, err := DraftInvoice(b2c("", "DE", "19", "100.00"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "F402-2026-" + string(rune('A'+i))
			out, err := d.Finish(id)
			if err != nil || !bytes.Contains(out, []byte("<cbc:ID>"+id+"</cbc:ID>")) {
				t.Errorf("%s: %v", id, err)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkDraftFinish is the cost of numbering a rendered draft, against
// BenchmarkRenderInvoice (a full render of the same invoice).
func BenchmarkDraftFinish(b *testing.B) {
	d, err := DraftInvoice(b2c("", "DE", "19", "100.00"))
	if err != nil {
		b.Fatal(err)
	}
	benchRender(b, func() ([]byte, error) { return d.Finish("F402-2026-000123") })
}

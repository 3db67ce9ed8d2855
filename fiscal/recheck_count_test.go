package fiscal_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestRecheckNowCountsOnlyRevisions: RecheckNow reports how many records
// got a new revision. A re-check that something else overtook while the
// registry was asked (a person's resolution, another pass that revised the
// record first) writes nothing and is not counted as revised.
func TestRecheckNowCountsOnlyRevisions(t *testing.T) {
	t.Run("resolved meanwhile", func(t *testing.T) {
		e, b, fake, rec, _ := recheckRace(t)
		ctx := context.Background()
		fake.Once(func() {
			if _, err := b.Resolve(ctx, rec.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, ""); err != nil {
				t.Errorf("resolve: %v", err)
			}
			fake.Set(recheckNumber, recheckValid)
		})
		n, err := e.RecheckNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := b.Record(ctx, rec.ID); n != 0 {
			t.Fatalf("RecheckNow counted %d revised; the record's only revision after the sale is the resolution (revision %d)", n, r.Revision)
		}
	})
	t.Run("two passes", func(t *testing.T) {
		e, b, fake, rec, _ := recheckRace(t)
		ctx := context.Background()
		fake.Set(recheckNumber, recheckValid)
		var inner int
		fake.Once(func() {
			var err error
			if inner, err = e.RecheckNow(ctx); err != nil {
				t.Errorf("other pass: %v", err)
			}
		})
		outer, err := e.RecheckNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := b.Record(ctx, rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if revisions := len(r.History) - 1; inner+outer != revisions {
			t.Fatalf("the two passes counted %d + %d revised; the record got %d revision(s)", inner, outer, revisions)
		}
	})
}

package returns_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestPastQuarterKeepsTheRegistrationsItsSuppliesWereMadeUnder: an Irish
// seller in the Union OSS sells to French and German consumers in Q1; each
// invoice states Ireland, its member state of identification (Art.
// 219a(2)(b) Directive 2006/112/EC), and the Q1 return declares both. In
// Q2 the operator rewrites the account's registrations, undated: a
// national registration in France, no OSS. A special scheme is left only
// from the end of a calendar quarter (Art. 57g Implementing Regulation
// (EU) No 282/2011), and the Q1 supplies were made, invoiced and
// declared under the OSS: the Q1 return, the Art. 63c records of its
// French supplies and the correction of a French refund recorded in Q2
// must stay as they were, not follow today's profile, and the return must
// say that the profile now disagrees with the registrations its supplies
// were made under. Until this version the Q1 return moved the French sale
// to the French national return and said nothing.
func TestPastQuarterKeepsTheRegistrationsItsSuppliesWereMadeUnder(t *testing.T) {
	ctx := context.Background()
	seller := ossSeller()
	var now = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, seller)
	cfg.Clock = func() time.Time { return now }
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	recs := settle(t, b, 1, sale{amount: "24.00", country: "FR", at: "2026-02-10T10:00:00Z"}, sale{amount: "11.90", country: "DE", at: "2026-03-10T10:00:00Z"})
	for _, r := range recs {
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C || r.Invoice == nil || r.Invoice.TaxCountry != "IE" {
			t.Fatalf("sale %s: %s %s %+v, want an OSS supply invoiced under Irish law", r.ID, r.ReviewStatus, r.Classification.Regime, r.Invoice)
		}
	}
	now = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	before, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Lines) != 2 || len(before.NotInOSS) != 0 {
		t.Fatalf("Q1 before the edit: lines %+v, notInOss %+v", before.Lines, before.NotInOSS)
	}
	records := func(b *fiscal.Books) []string {
		var ids []string
		if err := returns.Records(ctx, b, returns.RecordsQuery{Period: q1, MemberState: "FR"}, func(r returns.RecordRow) error {
			ids = append(ids, r.RecordID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if ids := records(b); len(ids) != 1 || ids[0] != recs[0].ID {
		t.Fatalf("Art. 63c records of France before the edit: %v", ids)
	}

	// May: the profile rewritten, then a refund of the French sale.
	now = time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	edited := seller
	edited.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(edited)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, e, 0)
	rf := refund(t, b, recs[0].ID, "12.00", "r-fr")
	now = time.Date(2026, 7, 5, 12, 0, 0, 0, time.UTC)

	after, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.Lines, before.Lines) || !reflect.DeepEqual(after.NotInOSS, before.NotInOSS) ||
		after.ID.MemberState != before.ID.MemberState || after.ID.Number != before.ID.Number {
		t.Errorf("Q1 after the edit: lines %+v, notInOss %+v, identification %+v; want as before: lines %+v, notInOss %+v, identification %+v",
			after.Lines, after.NotInOSS, after.ID, before.Lines, before.NotInOSS, before.ID)
	}
	review := strings.Join(after.Review, "\n")
	if !strings.Contains(review, "["+strconv.FormatInt(recs[0].Ledger.Index, 10)+"]") || !strings.Contains(review, "profile") {
		t.Errorf("Q1 review %q: want the French sale (ledger index %d) named as made under registrations the profile no longer states", after.Review, recs[0].Ledger.Index)
	}
	if ids := records(b); len(ids) != 1 || ids[0] != recs[0].ID {
		t.Errorf("Art. 63c records of France after the edit: %v, want the French sale still", ids)
	}
	q2, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(q2.Corrections) != 1 || q2.Corrections[0].OriginalPeriod != "2026-Q1" || q2.Corrections[0].MemberState != "FR" ||
		!reflect.DeepEqual(q2.Corrections[0].LedgerIndexes, []int64{rf.Ledger.Index}) {
		t.Errorf("Q2 corrections %+v, notInOss %+v: want the French refund as a correction of 2026-Q1", q2.Corrections, q2.NotInOSS)
	}
}

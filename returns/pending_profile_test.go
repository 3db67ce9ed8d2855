package returns_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// frenchSeller is a seller established in France and identified there for
// the Union OSS.
func frenchSeller() fiscal.Seller {
	s := fiscaltest.IrishSeller
	s.LegalName, s.Country, s.VATNumber, s.LegalID = "Demo Digital Services SARL", "FR", "FR40303265045", ""
	s.Address = fiscal.Address{Street: "1 rue de la Demo", City: "Paris", PostalCode: "75001"}
	s.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "FR", Number: "FR40303265045"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	return s
}

// TestPendingSupplyStaysWithItsStateOfIdentification: the French seller
// made two sales in Q1, one decided (a German consumer) and one pending
// review (no consumer country). The engine keeps the profile a pending
// sale was made under (fiscal's settlement-profile bucket,
// Books.SupplySeller), under which it will be decided: France identified
// the seller that day. The profile is then rewritten for a move to
// Ireland. Each member state of identification's return covers the
// supplies of its days (Art. 59(4) Implementing Regulation (EU) No
// 282/2011), so the pending sale is France's to resolve and declare:
// France's return counts it in excluded.pending, and Ireland's (the
// profile's) does not, saying where it is. Both counted it before.
func TestPendingSupplyStaysWithItsStateOfIdentification(t *testing.T) {
	ctx := context.Background()
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, frenchSeller()))
	b := fiscaltest.Books(t, e, 0)
	settle(t, b, 1, sale{amount: "12.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	pending := settle(t, b, 2, sale{amount: "23.80", country: "", at: "2026-02-16T10:00:00Z"})[0]
	if pending.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("a sale without the consumer's country: %s", pending.ReviewStatus)
	}
	if err := e.SetAccounts(fiscaltest.Accounts(ossSeller())); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, e, 0)
	if kept, err := b.SupplySeller(pending); err != nil || kept.Country != "FR" {
		t.Fatalf("the profile kept with the pending sale: %+v %v", kept.Country, err)
	}
	ie, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "IE"})
	if err != nil {
		t.Fatal(err)
	}
	if ie.Excluded.Pending.Records != 0 {
		t.Errorf("Ireland's return counts the pending sale made while France identified the seller: %+v", ie.Excluded.Pending)
	}
	if !strings.Contains(strings.Join(ie.Review, "\n"), "FR") || !slices.ContainsFunc(ie.Review, func(l string) bool { return strings.Contains(l, "pending") }) {
		t.Errorf("Ireland's review %q: want the pending sale named as France's", ie.Review)
	}
	fr, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "FR"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fr.Excluded.Pending.LedgerIndexes, []int64{pending.Ledger.Index}) {
		t.Errorf("France's return: pending %+v, want the sale at index %d", fr.Excluded.Pending, pending.Ledger.Index)
	}
}

// TestPendingOnlyQuarterDefaultsToItsStateOfIdentification: the French
// seller's only Q1 sale waits for review, and the profile was rewritten
// for Ireland afterwards. The profile kept with the sale identifies the
// seller in France on its day (Books.SupplySeller), and a member state of
// identification changes only from a day the seller states (Art. 57f
// Implementing Regulation (EU) No 282/2011): the return of Q1 asked for
// without a state is France's, counting the sale in excluded.pending.
func TestPendingOnlyQuarterDefaultsToItsStateOfIdentification(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, frenchSeller()))
	pending := settle(t, fiscaltest.Books(t, e, 0), 1, sale{amount: "23.80", country: "", at: "2026-02-16T10:00:00Z"})[0]
	if err := e.SetAccounts(fiscaltest.Accounts(ossSeller())); err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	for _, opts := range []returns.Options{{}, {MemberState: "FR"}} {
		r, _, err := returns.OSS(context.Background(), b, q1, opts)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if r.ID.MemberState != "FR" || !slices.Equal(r.Excluded.Pending.LedgerIndexes, []int64{pending.Ledger.Index}) {
			t.Errorf("%+v: identification %+v pending %+v: want France's return with the pending sale", opts, r.ID, r.Excluded.Pending)
		}
	}
}

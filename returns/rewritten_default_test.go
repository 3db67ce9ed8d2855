package returns_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRewrittenProfileDefaultsToTheRecordsState: the French seller's Q1
// supply was declared under France as member state of identification (its
// invoice's law, Art. 219a(2)(b) Directive 2006/112/EC), and the profile
// was rewritten afterwards, undated, for Ireland. The return asked for
// without a member state was Ireland's, the profile's, with the supply in
// excluded.otherState and the seller named as the profile is now (the
// Irish company and number). But a change of member state of
// identification applies from a day the seller states (Art. 57f
// Implementing Regulation (EU) No 282/2011), and the profile states none in
// Q1 that would make Ireland's return of it owed: the quarter's return is
// France's (Art. 59(4)), with the number (Art. 369d) and seller facts the
// supply's record kept, and it says why it is not the profile's.
func TestRewrittenProfileDefaultsToTheRecordsState(t *testing.T) {
	ctx := context.Background()
	fs := frenchSeller()
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, fs))
	recs := settle(t, fiscaltest.Books(t, e, 0), 1, sale{amount: "12.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	if err := e.SetAccounts(fiscaltest.Accounts(ossSeller())); err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	r, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatalf("the return of Q1 asked for without a member state: %v", err)
	}
	if r.ID.MemberState != "FR" || r.ID.Number != fs.VATNumber || len(r.Lines) != 1 || !slices.Equal(r.Lines[0].LedgerIndexes, []int64{recs[0].Ledger.Index}) {
		t.Errorf("identification %+v lines %+v: want France's return, under %s, with the supply", r.ID, r.Lines, fs.VATNumber)
	}
	if r.Seller.LegalName != fs.LegalName || r.Seller.VATNumber != fs.VATNumber || r.Seller.Country != "FR" {
		t.Errorf("seller %+v: want the facts the record kept (%s, %s, FR), not the rewritten profile's", r.Seller, fs.LegalName, fs.VATNumber)
	}
	if !strings.Contains(r.ID.Missing, "IE") || !strings.Contains(r.ID.Missing, "memberStateOfIdentification") {
		t.Errorf("identification note %q: want it to say the profile states IE and how to ask for it", r.ID.Missing)
	}
	if !slices.ContainsFunc(r.Review, func(l string) bool {
		return strings.Contains(l, "seller") && strings.Contains(l, "Demo Digital Services Ltd")
	}) {
		t.Errorf("review %q: want the seller header named as the records', with the profile's now", r.Review)
	}
}

// TestRewrittenProfileWithSeveralRecordStatesIsRefused: the seller's Q1
// supplies were declared under France, then (the profile rewritten,
// undated) under Germany, and the profile now states Ireland. No dated
// registration says which state's return is the quarter's default: each
// state is owed its own (Art. 59(4) Implementing Regulation (EU) No
// 282/2011), so the return asked for without one is refused, naming the
// states to ask for, rather than guessing one.
func TestRewrittenProfileWithSeveralRecordStatesIsRefused(t *testing.T) {
	fs := frenchSeller()
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, fs))
	settle(t, fiscaltest.Books(t, e, 0), 1, sale{amount: "12.00", country: "IT", at: "2026-02-15T10:00:00Z"})
	de := fs
	de.Country, de.VATNumber = "DE", "DE136695976"
	de.Address = fiscal.Address{Street: "1 Demostrasse", City: "Berlin", PostalCode: "10115"}
	de.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "DE", Number: "DE136695976"},
		{Scheme: vat.RegistrationNational, Country: "DE", Number: "DE136695976"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(de)); err != nil {
		t.Fatal(err)
	}
	settle(t, fiscaltest.Books(t, e, 0), 2, sale{amount: "12.00", country: "IT", at: "2026-03-15T10:00:00Z"})
	if err := e.SetAccounts(fiscaltest.Accounts(ossSeller())); err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	_, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	var fe *fiscal.Error
	if !isBadRequest(err, "memberStateOfIdentification") || !errors.As(err, &fe) || !strings.Contains(fe.Detail, "FR") || !strings.Contains(fe.Detail, "DE") {
		t.Fatalf("the return asked for without a member state: %v; want BAD_REQUEST naming FR and DE", err)
	}
	for _, ms := range []string{"FR", "DE"} {
		r, _, err := returns.OSS(context.Background(), b, q1, returns.Options{MemberState: ms})
		if err != nil || r.ID.MemberState != ms || len(r.Lines) != 1 {
			t.Errorf("%s's return: %v %+v", ms, err, r)
		}
	}
}

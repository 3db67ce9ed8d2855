package returns_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestNonUnionRegistrationInMonacoIsFrance: a non-Union OSS registration
// the seller states in MC is France's (Art. 7(1) Directive 2006/112/EC:
// Monaco is treated as France), as the engine and the invoice read it (the
// sale is invoiced under French rules). The return is France's, and asked
// for as FR; it named "MC", no member state, as its member state of
// identification, and a return asked for FR was refused as a state that
// identifies the seller on no day.
func TestNonUnionRegistrationInMonacoIsFrance(t *testing.T) {
	seller := fiscal.Seller{LegalName: "Example Inc.", Country: "US", LegalID: "US-EIN-123456789", OverThreshold: true,
		Address:       fiscal.Address{Street: "1 Main Street", City: "Springfield", PostalCode: "12345"},
		Registrations: []vat.Registration{{Scheme: vat.RegistrationOSSNonUnion, Country: "MC", Number: "EU250000001"}}}
	b, _ := ossSalesUnder(t, seller, []string{"FR"}, sale{amount: "12.00", country: "DE", at: "2026-01-15T10:00:00Z"})
	ctx := context.Background()
	def, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if def.Scheme != vat.SchemeNonUnion || def.ID.MemberState != "FR" || def.ID.Number != "EU250000001" || def.Total.Records != 1 {
		t.Errorf("the return's identification %+v (scheme %s, %d records), want FR, EU250000001 and the sale", def.ID, def.Scheme, def.Total.Records)
	}
	fr, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "FR"})
	if err != nil || fr.ID.MemberState != "FR" || fr.Total.Records != 1 {
		t.Errorf("France's return asked for: %+v, %v", fr, err)
	}
	// Monaco is no member state of identification (Art. 369a): a return
	// asked for MC is refused, not answered as France's (isEU).
	if _, _, err := returns.OSS(ctx, b, q1, returns.Options{MemberState: "MC"}); !isBadRequest(err, "memberStateOfIdentification") {
		t.Errorf("a return asked for MC: %v, want BAD_REQUEST on memberStateOfIdentification", err)
	}
}

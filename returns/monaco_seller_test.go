package returns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMonacoSellerUsesTheUnionScheme: transactions originating in Monaco
// are treated as originating in France (Art. 7(1) Directive 2006/112/EC),
// so a business established in Monaco is established in a member state
// and, stating no OSS registration, declares its cross-border consumer
// sales through the Union scheme identified in France (Art. 369a(2)), as
// the engine decides its sales (Scheme UNION). The return read the raw
// code MC as a third country and produced a non-Union return whose
// member state of identification is unknown, and named the seller's own
// records as supplied from an establishment outside the EU.
func TestMonacoSellerUsesTheUnionScheme(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.VATNumber, seller.LegalID = "Monaco Apps SAM", "MC", "FR40303265045", "MC-RCI-1"
	seller.Address = fiscal.Address{Street: "1 Boulevard des Moulins", City: "Monaco", PostalCode: "98000"}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	b := fiscaltest.Books(t, e, 0)
	recs := settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"})
	c := recs[0].Classification
	if recs[0].ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C {
		t.Fatalf("sale %s %s %s %+v", recs[0].ReviewStatus, c.Regime, c.Scheme, c.Reasons)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.Scheme != c.Scheme {
		t.Errorf("return scheme %s, the sale's %s: a seller in Monaco is established in France (Art. 7(1))", ret.Scheme, c.Scheme)
	}
	if ret.ID.MemberState != "FR" || ret.ID.Number != seller.VATNumber {
		t.Errorf("identification %+v: want France, the state Monaco is treated as, with the seller's French number", ret.ID)
	}
	if len(ret.Lines) != 1 || ret.Lines[0].MemberState != "DE" || len(ret.FixedEstablishments) != 0 {
		t.Errorf("lines %+v, sections %+v: want the German sale among the supplies from the member state of identification", ret.Lines, ret.FixedEstablishments)
	}
	if review := strings.Join(ret.Review, "\n"); strings.Contains(review, "outside the EU") {
		t.Errorf("review %q: the seller's own establishment in Monaco is not outside the EU", review)
	}
}

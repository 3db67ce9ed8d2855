package returns

import (
	"context"
	"fmt"
	"slices"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/refunds"
)

// Which registrations decide where an OSS_B2C supply is declared: through
// a special scheme, and of which member state of identification, or in
// the national return of the member state of consumption (Art. 369b, 359
// and 214(1)(a) Directive 2006/112/EC; declaredNationally). The account's
// profile states its registrations with their days (Seller.Registrations),
// but it is the profile of now: an operator may have rewritten the list
// since a past quarter, undated, and a return of that quarter must not
// follow. The supply was decided and invoiced under the profile of its
// day (the engine keeps it with a record pending review, fiscal's
// settlement-profile bucket, and decides the resolution under it), and its
// invoice states the result: the law it follows is that of the member
// state of identification of the scheme used (Art. 219a(2)(b)), or of the
// member state of consumption for a supply declared there (Art. 219a(1)),
// with the basis that says which (invoicelaw.OSSDeclaration), kept on the
// record (invoice.taxCountry, taxBasis; a refund's credit note repeats
// them). A special scheme is left, and a member state of identification
// changes, only from a day the seller states (Art. 57d, 57f, 57g
// Implementing Regulation (EU) No 282/2011): what the supply was declared
// under is a fact of its day. So the return reads it from the record, and
// where the profile now says otherwise, says so in review (editedReview);
// a record that does not state it (written before the engine kept the
// invoice's law, or invoiced by a summary or by none under the law of its
// member state of consumption) is read from the profile, and review says
// that too (unstatedReview): never a silent guess.

// declaration is how a supply was declared when it was made, as its record
// states it; known is false when the record does not say.
type declaration struct {
	msi      string // the member state of identification of the OSS scheme used; "" none stated
	national bool   // declared in the national return of the member state of consumption
	known    bool
}

// declaredWhenMade reads the declaration of an OSS_B2C supply to taxing
// from the law its invoice followed (taxCountry and taxBasis: the record's
// invoice, or a refund's credit note, which follows it) or, for a supply
// invoiced by a summary or by none (no invoice of its own), from the state
// whose invoicing rules apply to it (invoicingCountry): a member state
// other than that of consumption is the member state of identification
// (Art. 219a(2)(b)); the state of consumption itself may be either a
// national registration or an unstated identification, and is not read.
func declaredWhenMade(taxing, taxCountry, taxBasis, invoicingCountry string) declaration {
	if taxBasis != "" {
		oss, national, unstated := invoicelaw.OSSDeclaration(taxBasis)
		switch {
		case national:
			return declaration{national: true, known: true}
		case oss && isEU(taxCountry):
			return declaration{msi: isoCountry(taxCountry), known: true}
		case unstated:
			return declaration{known: true} // no member state of identification stated then: the return's
		}
		return declaration{}
	}
	if c := isoCountry(invoicingCountry); isEU(c) && c != isoCountry(taxing) {
		return declaration{msi: c, known: true}
	}
	return declaration{}
}

// declarations decides the declarations of a return's entries and keeps
// the ledger indexes of those that the profile now contradicts (edited)
// and of those read from it (unstated).
type declarations struct {
	seller           fiscal.Seller
	scheme, msi      string // the return's
	edited, unstated []int64
}

// of is whether an OSS_B2C entry of the OSS scheme named, to taxing, of
// day, was declared nationally, and the member state of identification it
// was declared under ("" when none is stated: the return's), from d when
// the record states it, else from the profile; note keeps the entry's
// index for review.
func (ds *declarations) of(index int64, scheme, taxing, day string, d declaration, note bool) (national bool, msi string) {
	pNational, pMSI := declaredNationally(ds.seller, scheme, taxing, day), identifiedIn(ds.seller, scheme, day)
	if !d.known {
		if note {
			ds.unstated = append(ds.unstated, index)
		}
		return pNational, pMSI
	}
	// The profile contradicts the record when it declares the entry
	// otherwise now: nationally or not, or under another member state of
	// identification than the record's (none stated is the return's own,
	// for its scheme, as the return counts it).
	if note && (d.national != pNational || !d.national && d.msi != pMSI && (pMSI != "" || scheme != ds.scheme || d.msi != ds.msi)) {
		ds.edited = append(ds.edited, index)
	}
	return d.national, d.msi
}

// review is what the return says of its entries' declarations.
func (ds *declarations) review() []string {
	var out []string
	if idx := sortedIndexes(ds.edited); len(idx) > 0 {
		out = append(out, fmt.Sprintf("%d entries (ledger indexes %v) were made and invoiced under registrations the account's profile no longer states for their day: "+
			"the return counts them as their invoices declared them, through the special scheme and member state of identification, or the national registration, their law names (Art. 219a Directive 2006/112/EC), not as the profile now says. "+
			"A special scheme is left, or a member state of identification changes, only from a day the seller states (Art. 57d, 57f, 57g Implementing Regulation (EU) No 282/2011; Registration validFrom and validTo): check the profile's registrations before filing",
			len(idx), idx))
	}
	if idx := sortedIndexes(ds.unstated); len(idx) > 0 {
		out = append(out, fmt.Sprintf("%d entries (ledger indexes %v) do not state the registration they were declared under (no invoice law on the record): "+
			"they are counted by the account's registrations for their day as the profile states them now, which may have been edited since they were made; check them before filing",
			len(idx), idx))
	}
	return out
}

func sortedIndexes(idx []int64) []int64 {
	slices.Sort(idx)
	return idx
}

// refundDeclared is how the supply a refund corrects was declared when it
// was made: as its credit note's law states (the invoice's), or, for a
// supply without an invoice (none required; no credit note), as its
// settlement's record states.
func refundDeclared(ctx context.Context, b *fiscal.Books, rf *refunds.Refund) (declaration, error) {
	c := rf.Classification
	if cn := rf.CreditNote; cn != nil {
		return declaredWhenMade(c.TaxingCountry, cn.TaxCountry, cn.TaxBasis, ""), nil
	}
	rec, _, err := b.Record(ctx, rf.SettlementID)
	if err != nil {
		return declaration{}, err
	}
	switch {
	case rec.Invoice != nil:
		return declaredWhenMade(c.TaxingCountry, rec.Invoice.TaxCountry, rec.Invoice.TaxBasis, ""), nil
	case rec.Invoicing != nil:
		return declaredWhenMade(c.TaxingCountry, "", "", rec.Invoicing.TaxCountry), nil
	}
	return declaration{}, nil
}

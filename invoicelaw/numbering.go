package invoicelaw

import (
	"fmt"
	"strings"
)

// Invoice numbers (BT-1). Art. 226(2) Directive 2006/112/EC requires on
// every invoice "a sequential number, based on one or more series, which
// uniquely identifies the invoice". Package fiscal numbers an account's
// documents in series of the account's prefix (CheckInvoicePrefix), a mark
// of the kind of document (none for invoices, CreditNoteMark for credit
// notes), the year of issue, a dash and six or more digits:
// F402-2026-000123, F402-CN-2026-000007.

// CreditNoteMark follows the account's prefix in its credit notes' numbers.
const CreditNoteMark = "CN-"

// SandboxPrefix opens the numbers of the sandbox's simulations in place of
// the account's prefix (package fiscal, Engine.documentSeller): a sandbox
// document is never a number of a real series.
const SandboxPrefix = "SANDBOX-"

// MaxInvoicePrefix bounds an account's prefix: BT-1 is an identifier, and
// the whole number should stay short enough for any accounting system.
const MaxInvoicePrefix = 20

// CheckInvoicePrefix checks the prefix an account chooses for its numbers
// (seller.invoicePrefix; "" is the default): letters, digits and - _ / .
// only, at most MaxInvoicePrefix characters, not opening with "SANDBOX"
// in any case (the sandbox's series, SandboxPrefix: an account's invoice
// never looks like a simulation), and such that no invoice number can be a
// credit-note number.
//
// An invoice number is P+YYYY+"-"+digits, a credit note's Q+"CN-"+YYYY+
// "-"+digits. Read from the right, both end in the digits after the only
// dash that follows the year, then the four digits of the year: equal
// numbers have the same digits and the same year, so P = Q+"CN-". A prefix
// that does not end in "CN-" therefore never numbers an invoice as any
// credit note, whatever prefix the account had, has or will have when it
// issues them (it may change it): refusing those prefixes is the whole
// rule, with no history to consult. The comparison ignores case, so that
// no invoice differs from a credit note only by the case of its mark.
func CheckInvoicePrefix(p string) error {
	if len(p) > MaxInvoicePrefix {
		return fmt.Errorf("seller.invoicePrefix is longer than %d characters", MaxInvoicePrefix)
	}
	if i := strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-_/.", r))
	}); i >= 0 {
		return fmt.Errorf("seller.invoicePrefix %q: only letters, digits and - _ / . may appear", p)
	}
	if sb := strings.TrimSuffix(SandboxPrefix, "-"); len(p) >= len(sb) && strings.EqualFold(p[:len(sb)], sb) {
		return fmt.Errorf("seller.invoicePrefix %q opens with %q, the sandbox's series: an account's invoices must never look like simulations", p, sb)
	}
	if n := len(p) - len(CreditNoteMark); n >= 0 && strings.EqualFold(p[n:], CreditNoteMark) {
		return fmt.Errorf("seller.invoicePrefix %q ends in %q, the mark of the account's credit-note numbers: its invoice numbers could equal credit-note numbers (Art. 226(2) Directive 2006/112/EC: a number that uniquely identifies the invoice)", p, CreditNoteMark)
	}
	return nil
}

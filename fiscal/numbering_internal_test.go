package fiscal

import (
	"fmt"
	"math"
	"testing"
)

// TestInvoiceNumberFormat: invoiceNumber writes what fmt's "%s%06d" writes,
// for numbers below, at and beyond six digits and any prefix.
func TestInvoiceNumberFormat(t *testing.T) {
	for _, prefix := range []string{"", "F402-2026-", "A/"} {
		for _, n := range []int64{0, 1, 9, 10, 99999, 100000, 999999, 1000000, 123456789, math.MaxInt64} {
			if got, want := invoiceNumber(prefix, n), fmt.Sprintf("%s%06d", prefix, n); got != want {
				t.Errorf("invoiceNumber(%q, %d) = %q, want %q", prefix, n, got, want)
			}
		}
	}
}

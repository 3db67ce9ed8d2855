package refunds

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/invoicing"
)

// TestCreditCapIgnoresDivisionPrecision: where a credit note's net would
// credit more VAT than the invoice has left (net × rate − 0.01 above it),
// the note credits the largest net in cents whose VAT can still be stated
// within 0.01 of net × rate. That largest net is a property of the figures
// alone; the decimal package's DivisionPrecision, a global any program
// linking the library may set, must not change it.
func TestCreditCapIgnoresDivisionPrecision(t *testing.T) {
	rate := decimal.NewFromInt(19)
	left := decimal.RequireFromString("0.04") // charged 0.19, credited 0.15
	cent := decimal.New(1, -2)
	// The largest n (in cents) with n × rate / 100 − 0.01 <= left, by counting.
	want := decimal.Zero
	for n := decimal.Zero; !n.Mul(rate).Shift(-2).Sub(cent).GreaterThan(left); n = n.Add(cent) {
		want = n
	}
	run := func() decimal.Decimal {
		s := &sumRate{
			total: invoicing.SummaryTotal{NetEUR: "1.00", VATEUR: "0.19"},
			st:    sumState{NetExact: "0.5", VATExact: "0.095", Net: "0.50", VAT: "0.15"},
		}
		a := amounts{netExact: decimal.RequireFromString("0.5"), vatExact: decimal.RequireFromString("0.095")}
		s.credit(&a, rate, true)
		return a.net
	}
	if got := run(); !got.Equal(want) {
		t.Fatalf("the note credits net %s; the largest net whose VAT fits what is left is %s", got, want)
	}
	saved := decimal.DivisionPrecision
	t.Cleanup(func() { decimal.DivisionPrecision = saved })
	for _, p := range []int{1, 2, 3} {
		decimal.DivisionPrecision = p
		if got := run(); !got.Equal(want) {
			t.Errorf("with decimal.DivisionPrecision = %d the note credits net %s, want %s", p, got, want)
		}
	}
}

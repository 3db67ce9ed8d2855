package returns_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/returns"
)

// TestQuarterBegunInATaxingStateHasAReturn: at 22:00 UTC on 31 March it is
// 1 April in Helsinki (UTC+3 in summer time), and a Finnish sale settled
// at 21:30 UTC is a supply of the second quarter (its local day, BT-72).
// The return of the second quarter was refused as "not begun" until the
// quarter began in UTC, while the ledger already held a supply of it; it
// is now a provisional return with that supply.
func TestQuarterBegunInATaxingStateHasAReturn(t *testing.T) {
	now := time.Date(2026, 3, 31, 22, 0, 0, 0, time.UTC)
	b := newBooks(t, now)
	recs := settle(t, b, 1, sale{amount: "12.40", country: "FI", at: "2026-03-31T21:30:00Z"})
	if d := recs[0].Classification.SupplyDate; d != "2026-04-01" {
		t.Fatalf("the Finnish sale's day of supply is %s, want 2026-04-01", d)
	}
	q2 := returns.Period{Year: 2026, Quarter: 2}
	ret, _, err := returns.OSS(context.Background(), b, q2, returns.Options{})
	if err != nil {
		t.Fatalf("the return of %s at %s: %v", q2, now.Format(time.RFC3339), err)
	}
	if ret.Status != returns.StatusProvisional || len(ret.Lines) != 1 || ret.Lines[0].MemberState != "FI" {
		t.Errorf("return %s %+v: want a provisional return with the Finnish supply", ret.Status, ret.Lines)
	}
}

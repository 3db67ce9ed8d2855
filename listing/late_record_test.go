package listing

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestWalkWithALateRecord: what a walk lists when a record whose createdAt
// is older than the walk's cursor is committed during it (createdAt is read
// when a record is decided, so concurrent requests can commit out of its
// order; a review staged it with the clock). Every record committed before
// the first page is listed once, in createdAt order; the late record is
// not in this walk (it sorts behind the cursor) and is in the next walk
// from the top, in its place. Listing's Query documents both, and points a
// follower of new records at the events, which keep the log's order.
func TestWalkWithALateRecord(t *testing.T) {
	var clock atomic.Int64
	base := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	b := demoBooks(t, func() time.Time { return base.Add(time.Duration(clock.Load()) * time.Second) })
	settle := func(at int64, n int) string {
		clock.Store(at)
		return settleDemo(t, b, n, "DE")
	}
	ids := func(p *Page) []string { return pageIDs(t, p) }
	var all []string
	for i, at := range []int64{100, 200, 300, 400} {
		all = append(all, settle(at, i))
	}
	p1, err := List(context.Background(), b, Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	walked := ids(p1)
	// The request begun at 350 is committed only now.
	late := settle(350, 9)
	all = append(all, late)
	q := Query{Limit: 2, Cursor: p1.NextCursor}
	for p1.HasMore {
		p, err := List(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, ids(p)...)
		p1, q.Cursor = p, p.NextCursor
	}
	want := []string{all[3], all[2], all[1], all[0]} // committed before the first page, newest first
	if !slices.Equal(walked, want) {
		t.Fatalf("the walk listed %v, want the records committed before its first page once each, newest first: %v", walked, want)
	}
	var fresh []string
	for q := (Query{Limit: 2}); ; {
		p, err := List(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, ids(p)...)
		if !p.HasMore {
			break
		}
		q.Cursor = p.NextCursor
	}
	if want := []string{all[3], late, all[2], all[1], all[0]}; !slices.Equal(fresh, want) {
		t.Fatalf("the next walk listed %v, want every record in createdAt order: %v", fresh, want)
	}
}

package httpserver_test

import (
	"encoding/base64"
	"testing"
)

// TestCursorBelongsToItsList: a listing cursor is a position in one
// account's index of one kind of record. A cursor of GET /settlements was
// accepted by GET /v1/fiscal-events and by another account's GET
// /settlements, and a made-up one of the right shape ("AQAAAAAAAAAA": the
// version byte and eight zero bytes) by either, answered with a page
// (there: empty, has_more false, as if the list had ended), although the
// problem they get otherwise says "not a cursor this service issued" and
// GET /v1/events refuses another list's cursor. Each is now a 400 naming
// cursor, and the walk with the list's own cursors is unchanged.
func TestCursorBelongsToItsList(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 3; i++ {
		for j, key := range []string{keyA, keyB} {
			if r := f.do("POST", "/settlements", key, mustJSON(t, settlement(map[string]any{"txHash": txHash(960000 + 10*i + j)}))); r.status != 201 {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
		if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(961000 + i)}))); r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	first := decodePage(t, f.do("GET", "/settlements?limit=1", keyA, nil))
	if first.NextCursor == "" {
		t.Fatal("no next_cursor on a page of one of three records")
	}
	if second := f.do("GET", "/settlements?limit=1&cursor="+first.NextCursor, keyA, nil); second.status != 200 {
		t.Fatalf("the list's own cursor: %d %s", second.status, second.body)
	}
	forged := base64.RawURLEncoding.EncodeToString(append([]byte{1}, make([]byte, 8)...))
	for _, c := range []struct{ what, path, key, cursor string }{
		{"a settlements cursor on the fiscal events", "/v1/fiscal-events", keyA, first.NextCursor},
		{"another account's cursor", "/settlements", keyB, first.NextCursor},
		{"a made-up cursor", "/settlements", keyA, forged},
		{"a made-up cursor on the fiscal events", "/v1/fiscal-events", keyA, forged},
	} {
		r := f.do("GET", c.path+"?limit=1&cursor="+c.cursor, c.key, nil)
		if r.status != 400 {
			t.Errorf("%s: %d %.200s, want 400 naming cursor", c.what, r.status, r.body)
			continue
		}
		assertProblem(t, r, 400, "BAD_REQUEST", "cursor")
	}
}

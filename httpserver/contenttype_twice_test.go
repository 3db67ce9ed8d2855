package httpserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestContentTypeSentTwiceRefused: Content-Type is a singleton field (RFC
// 9110 section 8.3): a request with two Content-Type field lines says two
// things about its body, and their combination ("application/json,
// text/plain", section 5.3) is not a media type. The server refused that
// combination sent on one line (415) but, sent on two lines, read the
// first and recorded the payment. Both are now 415 UNSUPPORTED_MEDIA_TYPE
// naming Content-Type, and nothing is recorded, whichever comes first.
func TestContentTypeSentTwiceRefused(t *testing.T) {
	f := newFixture(t)
	for i, types := range [][]string{{"application/json", "text/plain"}, {"text/plain", "application/json"}, {"application/json", "application/json"}} {
		req, err := http.NewRequest("POST", f.srv.URL+"/settlements", bytes.NewReader(mustJSON(t, settlement(map[string]any{"txHash": txHash(932000 + i)}))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Service-Key", keyA)
		for _, ct := range types {
			req.Header.Add("Content-Type", ct)
		}
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var p struct{ Code, Field string }
		_ = json.Unmarshal(raw, &p)
		if resp.StatusCode != http.StatusUnsupportedMediaType || p.Code != "UNSUPPORTED_MEDIA_TYPE" || p.Field != "Content-Type" {
			t.Errorf("Content-Type %q: %d %.200s, want 415 UNSUPPORTED_MEDIA_TYPE at Content-Type", types, resp.StatusCode, raw)
		}
	}
	if l := f.do("GET", "/settlements", keyA, nil); len(l.json(t)["data"].([]any)) != 0 {
		t.Fatalf("a refused request was recorded: %.300s", l.body)
	}
}

package httpserver_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"
)

// TestContentEncodingRefused: a request body sent with a Content-Encoding
// (gzip, br, ...) is not JSON as it stands, and the server decodes none:
// 415 UNSUPPORTED_MEDIA_TYPE naming Content-Encoding (RFC 9110 section 15.5.16:
// 415 for a content coding the server does not support), and nothing is
// recorded. A gzip body was a 400 "not valid UTF-8", and a JSON body
// labelled br was recorded although the client said its bytes meant
// something else. "identity" (no coding) is accepted.
func TestContentEncodingRefused(t *testing.T) {
	f := newFixture(t)
	body := mustJSON(t, settlement(nil))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	for _, c := range []struct {
		coding string
		body   []byte
	}{{"gzip", gz.Bytes()}, {"br", body}, {"gzip, identity", gz.Bytes()}} {
		r := f.do("POST", "/settlements", keyA, c.body, "Content-Encoding", c.coding)
		if r.status != http.StatusUnsupportedMediaType || r.json(t)["code"] != "UNSUPPORTED_MEDIA_TYPE" || r.json(t)["field"] != "Content-Encoding" {
			t.Errorf("Content-Encoding %s: %d %s, want 415 at Content-Encoding", c.coding, r.status, r.body)
		}
	}
	if l := f.do("GET", "/settlements", keyA, nil); len(l.json(t)["data"].([]any)) != 0 {
		t.Fatalf("a refused request was recorded: %s", l.body)
	}
	if r := f.do("POST", "/settlements", keyA, body, "Content-Encoding", "identity"); r.status != http.StatusCreated {
		t.Errorf("Content-Encoding identity: %d %s", r.status, r.body)
	}
}

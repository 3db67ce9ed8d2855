package httpserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestLogLine: the request line is the record LogAttrs would make,
// its source (for a handler with AddSource) a line of logRequest on every
// request, and nothing is built when the level drops it.
func TestRequestLogLine(t *testing.T) {
	var out bytes.Buffer
	s := &Server{log: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{AddSource: true}))}
	r := httptest.NewRequest("GET", "/v1/pricing", nil)
	r.Pattern = "GET /v1/pricing"
	for range 2 {
		s.logRequest(r, r.Pattern, http.StatusOK, &requestInfo{id: "req_1", account: "acct_a"}, 1500000)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), out.String())
	}
	for _, line := range lines {
		var rec struct {
			Level, Msg, RequestID, Method, Route, Account string
			Status                                        int
			DurationMS                                    float64 `json:"duration_ms"`
			Source                                        struct{ Function, File string }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Level != "INFO" || rec.Msg != "request" || rec.Route != "GET /v1/pricing" || rec.Status != 200 || rec.DurationMS != 1.5 {
			t.Errorf("line %s", line)
		}
		if !strings.HasSuffix(rec.Source.Function, "httpserver.(*Server).logRequest") || !strings.HasSuffix(rec.Source.File, "server.go") {
			t.Errorf("source %+v, want a line of logRequest in server.go", rec.Source)
		}
	}
	out.Reset()
	s.log = slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s.logRequest(r, r.Pattern, http.StatusOK, &requestInfo{id: "req_2"}, 0)
	if out.Len() != 0 {
		t.Errorf("logged below the level: %s", out.String())
	}
}

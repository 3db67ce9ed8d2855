package vies

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// TestResultWireFormatGolden pins the JSON of Result, which is stored on
// fiscal records as the registry proof: a change here changes stored data
// and must be deliberate (go test ./vies -run Golden -update).
func TestResultWireFormatGolden(t *testing.T) {
	now := time.Date(2026, 9, 14, 8, 0, 0, 0, time.UTC)
	type scenario struct {
		Scenario string `json:"scenario"`
		Result   Result `json:"result"`
	}
	viesCase := func(name string, status int, body string) scenario {
		r := parseVIES(status, []byte(body), "DE", "136695976", now)
		r.Attempts = 1
		return scenario{"vies: " + name, r}
	}
	hmrcCase := func(name string, status int, body string, verified bool) scenario {
		r := parseHMRC(status, []byte(body), "553557881", verified, now)
		r.Attempts = 1
		return scenario{"hmrc: " + name, r}
	}
	_, found := hmrcFound("553557881", "146295999727")
	got := []scenario{
		viesCase("valid with requestIdentifier", 200, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30.123+02:00","valid":true,"requestIdentifier":"WAPIAAAAZ0001","name":"Example GmbH","address":"Musterstr. 1\n10115 Berlin"}`),
		viesCase("valid, name and address undisclosed", 200, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30Z","valid":true,"requestIdentifier":"","name":"---","address":"---"}`),
		viesCase("invalid", 200, `{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30Z","valid":false,"name":"---","address":"---"}`),
		viesCase("INVALID_INPUT", 400, viesFault("INVALID_INPUT")),
		viesCase("MS_MAX_CONCURRENT_REQ as HTTP 200", 200, viesFault("MS_MAX_CONCURRENT_REQ")),
		viesCase("IP_BLOCKED as userError", 200, `{"isValid":false,"userError":"IP_BLOCKED","name":"---"}`),
		viesCase("HTTP 503 html", 503, `<html>Service Unavailable</html>`),
		viesCase("malformed", 200, `{"valid":`),
		hmrcCase("valid, verified", 200, found, true),
		hmrcCase("NOT_FOUND", 404, `{"code":"NOT_FOUND","message":"targetVrn does not match a registered company"}`, false),
		hmrcCase("requester not registered", 403, `{"code":"INVALID_REQUEST","message":"requesterVrn does not match a registered company"}`, true),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "results.golden.json")
	testtool.Golden(t, path, buf.Bytes(), *update)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The stored proof reads back to the same Result.
	var back []scenario
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if !back[i].Result.RequestDate.Equal(got[i].Result.RequestDate) {
			t.Errorf("%s: date %v ≠ %v", back[i].Scenario, back[i].Result.RequestDate, got[i].Result.RequestDate)
		}
		back[i].Result.RequestDate = got[i].Result.RequestDate
		if back[i] != got[i] {
			t.Errorf("round trip: %+v ≠ %+v", back[i], got[i])
		}
	}
}

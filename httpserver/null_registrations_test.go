package httpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
)

// TestSimulateSellerRegistrationsNullIsRefused: a seller without
// registrations is taken to be registered wherever its sales are taxed
// (not checked), while any list, the empty one included, is checked
// (README "Registrations"). JSON null is read as the member left out, so
// "registrations": null asked for more than any list would: a simulation
// of an Irish seller's sale to a consumer in Great Britain came out
// PROCESSED where [] says seller_not_registered. null is a 400 naming
// /seller/registrations; absent and [] keep their meaning.
func TestSimulateSellerRegistrationsNullIsRefused(t *testing.T) {
	f := newFixture(t)
	body := func(regs string) []byte {
		seller := `{"legalName":"Seller IE Ltd","vatNumber":"IE1234567T","legalId":"IE-CRO-1","country":"IE","overThreshold":true,` +
			`"address":{"street":"1 Main Street","city":"Dublin","postalCode":"D02 X285"}` + regs + `}`
		b := mustJSON(t, settlement(map[string]any{"consumerCountry": "GB"}))
		return []byte(strings.TrimSuffix(string(b), "}") + `,"seller":` + seller + `}`)
	}
	status := func(regs string) string {
		r := f.do("POST", "/sandbox/v1/simulate", "", body(regs))
		if r.status != 201 {
			t.Fatalf("registrations %q: %d %s", regs, r.status, r.body)
		}
		var sim struct {
			Record struct {
				ReviewStatus  string `json:"reviewStatus"`
				ReviewReasons []struct {
					Code string `json:"code"`
				} `json:"reviewReasons"`
			} `json:"record"`
		}
		if err := json.Unmarshal(r.body, &sim); err != nil {
			t.Fatal(err)
		}
		return sim.Record.ReviewStatus
	}
	if got := status(`,"registrations":[]`); got != fiscal.StatusPendingReview {
		t.Fatalf("registrations []: %s, want %s (seller_not_registered): the case this test is about", got, fiscal.StatusPendingReview)
	}
	status("") // absent: not checked
	wantProblem(t, f.do("POST", "/sandbox/v1/simulate", "", body(`,"registrations":null`)), 400, string(fiscal.CodeBadRequest), "/seller/registrations")
}

// TestAccountsFileSellerRegistrationsNullIsRefused: the accounts file
// refuses "registrations": null as it refuses an unknown member, instead of
// reading it as left out (registrations not stated, not checked).
func TestAccountsFileSellerRegistrationsNullIsRefused(t *testing.T) {
	file := testAccountsFile()
	for _, regs := range []string{"", `"registrations":[],`, `"registrations":null,`} {
		raw, err := json.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(raw), `"seller":{`, `"seller":{`+regs, 1)
		path := filepath.Join(t.TempDir(), "accounts.json")
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = httpserver.LoadAccountsFile(path)
		if null := strings.Contains(regs, "null"); (err != nil) != null || null && !strings.Contains(err.Error(), "registrations") {
			t.Errorf("seller with %q: %v", regs, err)
		}
	}
}

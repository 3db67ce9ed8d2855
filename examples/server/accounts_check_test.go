package main

import (
	"strings"
	"testing"
)

// TestAccountsCreateChecksInvoicing: a seller whose invoices cannot be
// issued is told so when its account is created, with the seller's field
// and the rule of each problem (invoicelaw.Check), and refused
// unless -allow-review; a complete seller is created.
func TestAccountsCreateChecksInvoicing(t *testing.T) {
	data := []string{"-data", t.TempDir()}
	noContact := `{"legalName":"Beispiel GmbH","country":"DE","vatNumber":"DE812847601","address":{"street":"Hauptstraße 1","city":"Berlin","postalCode":"10115"}}`
	_, errOut, err := runCommand(t, nil, append([]string{"accounts", "create", "-id", "acct_de", "-seller-json", noContact}, data...)...)
	if err == nil || !strings.Contains(errOut, "DE-R-002") || !strings.Contains(errOut, "/seller/contact/email DE-R-007") || !strings.Contains(errOut, "-allow-review") {
		t.Fatalf("a German seller without contact: %v\n%s", err, errOut)
	}
	out, errOut, err := runCommand(t, nil, append([]string{"accounts", "create", "-id", "acct_de", "-allow-review", "-seller-json", noContact}, data...)...)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "sk_") || !strings.Contains(errOut, "created anyway") {
		t.Fatalf("-allow-review: %v %q\n%s", err, out, errOut)
	}
	full := `{"legalName":"Beispiel GmbH","country":"DE","vatNumber":"DE812847601","address":{"street":"Hauptstraße 1","city":"Berlin","postalCode":"10115"},` +
		`"contact":{"name":"Buchhaltung","telephone":"+49 30 1234567","email":"rechnung@example.de"}}`
	out, errOut, err = runCommand(t, nil, append([]string{"accounts", "create", "-id", "acct_de_full", "-seller-json", full}, data...)...)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "sk_") || strings.Contains(errOut, "cannot be invoiced") {
		t.Fatalf("a complete German seller: %v %q\n%s", err, out, errOut)
	}
}

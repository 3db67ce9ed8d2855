package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAccountsCreateNamesTheFieldOnce: a seller value that the accounts
// file would refuse is refused by accounts create with one message that
// names the offending flag (or, with -seller-json, the member) once, with
// the value, and the accounts file is not written.
func TestAccountsCreateNamesTheFieldOnce(t *testing.T) {
	cases := []struct {
		title string
		args  []string
		field string // the flag or member the message must name
		value string
		name  string // the field's own name, in any spelling (-legal-name, legalName), as an expression
	}{
		{"country flag", []string{"-legal-name", "Shop Ltd", "-country", "ZZ"}, "-country", `"ZZ"`, "country"},
		{"legal name flag", []string{"-legal-name", "Shop\x01Ltd", "-country", "IE"}, "-legal-name", "U+0001", "legal-?name"},
		{"seller-json country", []string{"-seller-json", `{"legalName":"Shop Ltd","country":"ZZ"}`}, "/seller/country", `"ZZ"`, "country"},
		{"seller-json establishment", []string{"-seller-json", `{"legalName":"Shop Ltd","country":"IE","otherEstablishments":["DE","ZZ"]}`}, "/seller/otherEstablishments/1", `"ZZ"`, "otherEstablishments"},
	}
	for _, c := range cases {
		t.Run(c.title, func(t *testing.T) {
			dir := t.TempDir()
			_, errOut, err := runCommand(t, nil, append([]string{"accounts", "create", "-data", dir, "-id", "acct_x"}, c.args...)...)
			if err == nil {
				t.Fatalf("accepted\n%s", errOut)
			}
			last := strings.TrimSpace(errOut)
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			if !strings.Contains(last, c.field) || !strings.Contains(last, c.value) {
				t.Errorf("the message does not name %s with %s: %q", c.field, c.value, last)
			}
			// The field's last name segment, as a flag (-country), a
			// member path (/seller/country) or a Go-ish path
			// (seller.country), may appear once.
			re := regexp.MustCompile(`(?i)(^|[-/.])` + c.name + `\b`)
			if n := len(re.FindAllString(last, -1)); n != 1 {
				t.Errorf("the message names the field %d times, want once: %q", n, last)
			}
			if _, err := os.Stat(filepath.Join(dir, "accounts.json")); !os.IsNotExist(err) {
				t.Errorf("the accounts file was written (%v)", err)
			}
		})
	}
}

// TestAccountsCreateAsksForTheIDFirst: "accounts create" without -id (or
// with an id the file cannot hold) ran the invoicing check first, printing
// "account : these sales cannot be invoiced ..." and refusing with the
// invoicing rules of an unnamed account: the missing flag was named only
// once those were fixed (or with -allow-review). The id is checked first.
func TestAccountsCreateAsksForTheIDFirst(t *testing.T) {
	for _, c := range []struct {
		title string
		id    []string
		want  string
	}{
		{"no -id", nil, "-id is required"},
		{"bad id", []string{"-id", "shop one"}, `"shop one"`},
	} {
		t.Run(c.title, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"accounts", "create", "-data", dir, "-legal-name", "Shop Ltd", "-country", "IE"}, c.id...)
			_, errOut, err := runCommand(t, nil, args...)
			if err == nil || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "cannot be invoiced") {
				t.Errorf("%v\n%s\nwant %q, and no invoicing check of an account without a valid id", err, errOut, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "accounts.json")); !os.IsNotExist(err) {
				t.Errorf("the accounts file was written (%v)", err)
			}
		})
	}
}

// TestAccountsKeyCommandsNeedTheFile: rotate-key and drop-old-keys change
// an account of an existing accounts file. Given a -data that is not the
// server's (a typo, another directory), they made that directory and a
// lock file in it, and answered 'no account "acct_x" in the accounts
// file' without naming the file, which did not exist. They now name the
// file, say it is missing, and create nothing.
func TestAccountsKeyCommandsNeedTheFile(t *testing.T) {
	for _, cmd := range []string{"rotate-key", "drop-old-keys"} {
		t.Run(cmd, func(t *testing.T) {
			parent := t.TempDir()
			data := filepath.Join(parent, "typo-data")
			_, errOut, err := runCommand(t, nil, "accounts", cmd, "-data", data, "-id", "acct_x")
			file := filepath.Join(data, "accounts.json")
			if err == nil || !strings.Contains(errOut, file) || !strings.Contains(errOut, "does not exist") {
				t.Errorf("%v\n%s\nwant an error naming %s as missing", err, errOut, file)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("the command created %s", entries[0].Name())
			}
			// An existing file without the account: the file is named.
			if _, _, err := runCommand(t, nil, "accounts", "create", "-data", data, "-id", "acct_y", "-allow-review", "-legal-name", "Y Ltd", "-country", "IE"); err != nil {
				t.Fatal(err)
			}
			_, errOut, err = runCommand(t, nil, "accounts", cmd, "-data", data, "-id", "acct_x")
			if err == nil || !strings.Contains(errOut, file) || !strings.Contains(errOut, `"acct_x"`) {
				t.Errorf("%v\n%s\nwant an error naming acct_x and %s", err, errOut, file)
			}
		})
	}
}

package httpserver_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestEveryErrorCodeInREADMETable: every code the server can answer
// (fiscal.Codes, the one code→status table) has a row of the README's
// "## Errors" table under its own status, so that a client reading the
// table meets no code it was not told about (PAYMENT_CONFLICT,
// RECORD_NOT_PENDING, PERIOD_OPEN, ... were answered but not listed).
func TestEveryErrorCodeInREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "\n## Errors\n")
	if start < 0 {
		t.Fatal("README has no ## Errors section")
	}
	section := s[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	rows := map[int]string{} // status → the code columns of its rows
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		st, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		rows[st] += cells[2]
	}
	if len(rows) == 0 {
		t.Fatal("the README's ## Errors section has no table rows")
	}
	for _, c := range fiscal.Codes() {
		if !strings.Contains(rows[c.HTTPStatus()], "`"+string(c)+"`") {
			t.Errorf("%s (%d) has no row of the README's errors table under status %d", c, c.HTTPStatus(), c.HTTPStatus())
		}
	}
}

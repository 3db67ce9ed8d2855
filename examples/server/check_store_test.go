package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestCheckOfAReplica: on a replica whose ledger is in PostgreSQL (-store,
// FISCAL402_STORE or FISCAL402_DATABASE_URL, as the server reads it),
// "server check -data DIR" checks that log, the one the server serves,
// not a <data>/ledger.db that a replica does not have. A review found it
// answering "ledger.db: not found" with FISCAL402_DATABASE_URL set, so an
// operator could check a replica only by spelling the URL as -ledger.
func TestCheckOfAReplica(t *testing.T) {
	url := pgtest.Schema(t)
	dir := t.TempDir()
	p := startServer(t, dir, "-store", url)
	for n := range 3 {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
	}
	p.kill()
	for _, c := range []struct {
		name string
		args []string
		env  string
	}{
		{"-store", []string{"check", "-data", dir, "-store", url}, ""},
		{"FISCAL402_STORE", []string{"check", "-data", dir}, "FISCAL402_STORE"},
		{"FISCAL402_DATABASE_URL", []string{"check", "-data", dir}, "FISCAL402_DATABASE_URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, url)
			}
			var out bytes.Buffer
			err := run(c.args, &out, io.Discard)
			if err != nil || !strings.Contains(out.String(), "ledger.Check passed") || !strings.Contains(out.String(), fmt.Sprintf("log size %d", 3)) {
				t.Fatalf("%q: %v, %q", c.args, err, out.String())
			}
		})
	}
}

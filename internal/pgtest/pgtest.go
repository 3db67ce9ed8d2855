// Package pgtest gives tests a PostgreSQL schema of their own on the
// machine's server (FISCAL402_TEST_DATABASE_URL, default
// postgres://root@127.0.0.1:5432/test), so that tests run in parallel
// without seeing each other's data. Without a reachable server a test
// skips, and fails under FISCAL402_STRICT=1.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// DefaultURL is the database CI uses (trust authentication).
const DefaultURL = "postgres://root@127.0.0.1:5432/test?sslmode=disable"

// BaseURL is the database the schemas are made in.
func BaseURL() string {
	if u := os.Getenv("FISCAL402_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

var (
	reachOnce sync.Once
	reachErr  error
)

// Available reports whether the server answers (tried once per process).
func Available() error {
	reachOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, BaseURL())
		if err != nil {
			reachErr = err
			return
		}
		reachErr = c.Ping(ctx)
		c.Close(ctx)
	})
	return reachErr
}

// Schema creates an empty schema, dropped when the test ends, and returns
// a URL whose connections use it (search_path).
func Schema(t testing.TB) string {
	t.Helper()
	if err := Available(); err != nil {
		testtool.Missing(t, "PostgreSQL", "no server at "+BaseURL()+": "+err.Error())
		return ""
	}
	var b [6]byte
	rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	c, err := pgx.Connect(ctx, BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("FISCAL402_KEEP_SCHEMAS") == "1" {
			t.Logf("kept schema %s", name)
			return
		}
		c, err := pgx.Connect(ctx, BaseURL())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
	})
	return WithSchema(BaseURL(), name)
}

// WithSchema returns u with search_path set to schema.
func WithSchema(u, schema string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Set("search_path", schema)
	p.RawQuery = q.Encode()
	return p.String()
}

// Backends is the table of ledger stores that backend-independent tests
// run on (EachBackend).
var Backends = []string{"bbolt", "postgres"}

// onPostgres holds the names of the subtests EachBackend runs on
// PostgreSQL.
var onPostgres sync.Map

// EachBackend runs fn once per backend, as subtests named after it; in the
// PostgreSQL one (and its subtests) OnPostgres is true, so that the
// helpers that make ledgers and engines make PostgreSQL ones.
func EachBackend(t *testing.T, fn func(t *testing.T)) {
	for _, b := range Backends {
		t.Run(b, func(t *testing.T) {
			if b == "postgres" {
				if err := Available(); err != nil {
					testtool.Missing(t, "PostgreSQL", err.Error())
				}
				onPostgres.Store(t.Name(), true)
			}
			fn(t)
		})
	}
}

// OnPostgres reports whether t runs inside EachBackend's PostgreSQL
// subtest.
func OnPostgres(t testing.TB) bool {
	pg := false
	onPostgres.Range(func(k, _ any) bool {
		name := k.(string)
		pg = t.Name() == name || strings.HasPrefix(t.Name(), name+"/")
		return !pg
	})
	return pg
}

package ledger

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A connection URI may carry its secrets in the query as well as in the
// userinfo: libpq takes every connection parameter as a query parameter
// (PostgreSQL documentation, "Connection URIs"), password and sslpassword
// (the client key's passphrase) included. The URL the ledger names in its
// messages (every unavailable error a server logs, the start that fails)
// must carry none of them.
func TestPostgresURLSecretsNotInMessages(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: the open fails at once
	s, _, _ := testKey(t, testOrigin, "log key 1")
	secrets := []string{"userinfoSecret1", "querySecret2", "sslKeySecret3"}
	for _, u := range []string{
		"postgres://fiscal:" + secrets[0] + "@" + addr + "/db?sslmode=disable&password=" + secrets[1] + "&sslpassword=" + secrets[2],
		"postgresql://fiscal@" + addr + "/db?password=" + secrets[1] + "&sslmode=disable&connect_timeout=2",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := OpenPostgres(ctx, u, Options{Origin: testOrigin, Signer: s, OpenTimeout: 3 * time.Second})
		cancel()
		if err == nil {
			t.Fatalf("open %s: nothing listens there, yet it opened", addr)
		}
		for _, sec := range secrets {
			if strings.Contains(err.Error(), sec) {
				t.Errorf("the error of a failed open shows the secret %q: %v", sec, err)
			}
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("the error no longer names the database %s: %v", addr, err)
		}
	}
}

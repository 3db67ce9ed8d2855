package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent regenerates embedded_gen.go in memory from the
// embedded data file and compares it with what is committed.
func TestGeneratedFileIsCurrent(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "data", "ecb-eurusd.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, first, last, err := check(data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	prov, ok := provenance[hash]
	if !ok {
		t.Fatalf("no provenance for sha256 %s", hash)
	}
	code, err := render("fx/data/ecb-eurusd.csv", hash, prov, rows, first, last)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../embedded_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(code, committed) {
		t.Error("fx/embedded_gen.go is stale: run go generate ./fx")
	}
}

func TestCheckRejects(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"date,usd_per_eur\n2020-01-02,1.1", "final newline"},
		{"date,rate\n2020-01-02,1.1\n", "header"},
		{"date,usd_per_eur\n", "no rows"},
		{"date,usd_per_eur\n2020-01-02,1.1\n2020-01-02,1.1\n", "line 3: date 2020-01-02 not after"},
		{"date,usd_per_eur\n2020-01-03,1.1\n2020-01-02,1.1\n", "line 3"},
		{"date,usd_per_eur\n2020-01-02,N/A\n", "line 2"},
		{"date,usd_per_eur\r\n2020-01-02,1.1\r\n", "header"},
	} {
		_, _, _, err := check([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("check(%q) = %v, want an error containing %q", tc.in, err, tc.msg)
		}
	}
}

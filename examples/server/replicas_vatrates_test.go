package main

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestReplicaWithAnotherRateTableIsWarned: replicas on one PostgreSQL log
// must decide with one VAT rate table (README "Several replicas on
// PostgreSQL", "One rate table"): a supply must not be taxed differently
// by the replica that happens to answer. A replica started with another
// table than the replica started before it said nothing about it at
// start (each logged only its own table). It must warn, naming both
// tables; a replica started with the table the log last saw must not.
func TestReplicaWithAnotherRateTableIsWarned(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	table := coveringRateTable(t)
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	startServerWith(t, dirA, nil, replicaLog(t, 0), "-store", url)
	copyDir(t, dirA, dirB)
	copyDir(t, dirA, dirC)
	var logB, logC syncBuffer
	startServerWith(t, dirB, nil, &logB, "-store", url, "-vat-rates", table)
	embedded := vat.Rates().Digest()
	other, err := readRateTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if embedded == other.Digest() {
		t.Fatal("the test's table is the embedded one")
	}
	var warned string
	for _, line := range strings.Split(logB.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, embedded) && strings.Contains(line, other.Digest()) {
			warned = line
		}
	}
	if warned == "" {
		t.Fatalf("replica B decides with %s, replica A with %s, and B's start log warns of neither:\n%s", other.Digest(), embedded, logB.String())
	}
	t.Logf("B: %s", warned)
	startServerWith(t, dirC, nil, &logC, "-store", url, "-vat-rates", table)
	if strings.Contains(logC.String(), embedded) {
		t.Fatalf("replica C decides with the table B started with, yet warns:\n%s", logC.String())
	}
}

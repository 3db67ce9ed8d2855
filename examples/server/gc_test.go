package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestGCDefault: without GOGC in the environment the server collects at
// defaultGOGC; with it, the environment's setting stays.
func TestGCDefault(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	setGCDefault(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGOGC {
		t.Errorf("without GOGC: GC percent %d, want %d", got, defaultGOGC)
	}
	setGCDefault(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100: GC percent %d, want 100 (the environment's)", got)
	}
}

// TestProcsDefault: with the bbolt ledger, no GOMAXPROCS in the
// environment and no CPU quota below the CPUs, the server schedules on one
// P more than Go found; with GOMAXPROCS set, with PostgreSQL, or under a
// quota (Go's choice below the CPUs), the setting stays.
func TestProcsDefault(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	none := func(string) string { return "" }
	setProcsDefault(none, true, 2)
	if got := runtime.GOMAXPROCS(2); got != 3 {
		t.Errorf("bbolt, 2 CPUs, no GOMAXPROCS: %d P's, want 3", got)
	}
	setProcsDefault(func(k string) string {
		if k == "GOMAXPROCS" {
			return "2"
		}
		return ""
	}, true, 2)
	if got := runtime.GOMAXPROCS(2); got != 2 {
		t.Errorf("bbolt, GOMAXPROCS=2: %d P's, want 2 (the environment's)", got)
	}
	setProcsDefault(none, false, 2)
	if got := runtime.GOMAXPROCS(2); got != 2 {
		t.Errorf("PostgreSQL: %d P's, want 2", got)
	}
	setProcsDefault(none, true, 8)
	if got := runtime.GOMAXPROCS(2); got != 2 {
		t.Errorf("bbolt under a quota of 2 of 8 CPUs: %d P's, want 2", got)
	}
}

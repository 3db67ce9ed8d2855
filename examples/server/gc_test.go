package main

import (
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

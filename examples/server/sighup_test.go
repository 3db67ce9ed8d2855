package main

import (
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPRightAfterStart: once the server says it listens, SIGHUP
// re-reads the accounts file (README "Accounts"); it must never end the
// process. The handler was installed after the "listening on" line, so a
// SIGHUP sent on that line (a service manager's reload, a script that
// waits for the line) met Go's default action and killed the server.
func TestSIGHUPRightAfterStart(t *testing.T) {
	for i := 0; i < 8; i++ {
		p := startServer(t, t.TempDir(), "-accounts-reload", "0")
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
			t.Fatalf("start %d: the server exited (%v) on a SIGHUP right after it said it listens", i, p.cmd.ProcessState)
		case <-time.After(300 * time.Millisecond):
		}
		p.kill()
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestWalkthrough runs examples/walkthrough.sh, the new user's tour, against
// the real server binary: every step must answer as the script expects.
// Steps for routes this build does not serve are skipped by the script
// itself (it reads the server's /openapi.json).
func TestWalkthrough(t *testing.T) {
	bash := testtool.LookPath(t, "bash")
	testtool.LookPath(t, "curl")
	testtool.LookPath(t, "python3")
	p := startServer(t, t.TempDir())
	cmd := exec.Command(bash, filepath.Join("..", "walkthrough.sh"))
	cmd.Env = append(os.Environ(), "BASE="+p.base, "KEY="+demoKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), ", 0 unexpected") {
		t.Errorf("walkthrough summary missing:\n%s", out)
	}
	for _, want := range []string{"-> 201", "Idempotent-Replayed: true", "IDEMPOTENCY_CONFLICT", "PENDING_MANUAL_REVIEW", "receipt rcpt_x402-", "determination_coverage       determined", "return verified: OSS return 2026-Q2"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("walkthrough output lacks %q", want)
		}
	}
	t.Logf("%s", out)
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWebhookChangesInTheFileAreSaidToWait: README "Accounts": "Changes of
// an account's webhook endpoints in the file are applied at the next
// start." The running server re-read such a file and logged only "accounts
// file applied", which reads as if the new endpoints were in use. It now
// warns, naming the accounts (not the URLs or secrets), that their
// endpoints apply at the next start.
func TestWebhookChangesInTheFileAreSaidToWait(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	p := startServerWith(t, dir, nil, logFile, "-accounts-reload", "0")
	path := filepath.Join(dir, "accounts.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_0123456789abcdef0123456789"
	acct := f["accounts"].([]any)[0].(map[string]any)
	acct["webhooks"] = []any{map[string]any{"url": "https://hooks.example/fiscal?token=t0k3n", "secrets": []any{secret}}}
	changed, _ := json.MarshalIndent(f, "", "  ")
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var log string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if log = string(b); strings.Contains(log, "accounts file applied") || strings.Contains(log, "not applied") {
			break
		}
	}
	if !strings.Contains(log, "accounts file applied") {
		select {
		case <-p.done:
			t.Fatalf("the server exited (%v) on the SIGHUP:\n%s", p.cmd.ProcessState, log)
		default:
		}
		t.Fatalf("the reload was not applied:\n%s", log)
	}
	var warning string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "webhook") && strings.Contains(line, "next start") {
			warning = line
		}
	}
	if warning == "" || !strings.Contains(warning, demoAccountID) {
		t.Errorf("no warning that %s's webhook endpoints wait for the next start:\n%s", demoAccountID, log)
	}
	if strings.Contains(log, secret) || strings.Contains(log, "t0k3n") {
		t.Errorf("the log shows the endpoint's secret or URL:\n%s", log)
	}
}

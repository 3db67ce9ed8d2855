package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runUntilListening runs the server binary with env (FISCAL402_DEMO_KEY not
// inherited) until it says where it listens, then kills it; it returns the
// standard output and error so far and whether it exited on its own (with
// its exit code).
func runUntilListening(t *testing.T, dataDir string, env []string, extra ...string) (stdout, stderr string, exited bool, code int) {
	t.Helper()
	cmd := exec.Command(serverBinary(t), append([]string{"-data", dataDir, "-listen", "127.0.0.1:0", "-fx-refresh=false"}, extra...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FISCAL402_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var outBuf strings.Builder
	listening := make(chan struct{}, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			outBuf.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "demo account") {
				listening <- struct{}{}
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { <-scanned; waited <- cmd.Wait() }()
	select {
	case <-listening:
		_ = cmd.Process.Kill()
		<-waited
		return outBuf.String(), errBuf.String(), false, 0
	case err := <-waited:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return outBuf.String(), errBuf.String(), true, code
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("server neither listened nor exited within 30s")
	}
	return
}

// TestDemoKeyPrintedOnlyWhenCreated (issue 19 item 8): the real binary
// prints the demo key the start it creates it, never again; a
// FISCAL402_DEMO_KEY that is not the stored key stops it with an error,
// and the stored key is unchanged.
func TestDemoKeyPrintedOnlyWhenCreated(t *testing.T) {
	dir := t.TempDir()
	first, _, exited, _ := runUntilListening(t, dir, nil)
	if exited {
		t.Fatalf("first start exited:\n%s", first)
	}
	_, key, ok := strings.Cut(first, "only its hash is kept): ")
	key, _, _ = strings.Cut(key, "\n")
	if !ok || !strings.HasPrefix(key, "sk_") {
		t.Fatalf("first start did not print a new key:\n%s", first)
	}
	second, _, exited, _ := runUntilListening(t, dir, nil)
	if exited || strings.Contains(second, key) || strings.Contains(second, "sk_") {
		t.Fatalf("second start printed a key (or exited %v):\n%s", exited, second)
	}
	same, _, exited, _ := runUntilListening(t, dir, []string{"FISCAL402_DEMO_KEY=" + key})
	if exited || strings.Contains(same, "sk_") {
		t.Fatalf("start with the stored key in FISCAL402_DEMO_KEY: exited %v or printed it:\n%s", exited, same)
	}
	before, err := os.ReadFile(dir + "/accounts.json")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, exited, code := runUntilListening(t, dir, []string{"FISCAL402_DEMO_KEY=sk_test_another_key_0123456789"})
	if !exited || code == 0 || !strings.Contains(errOut, "FISCAL402_DEMO_KEY is not the key of account acct_demo") {
		t.Fatalf("a different FISCAL402_DEMO_KEY: exited %v code %d\nstdout %s\nstderr %s", exited, code, out, errOut)
	}
	if strings.Contains(out+errOut, "sk_") {
		t.Errorf("the refusal printed a key:\n%s%s", out, errOut)
	}
	after, _ := os.ReadFile(dir + "/accounts.json")
	if !bytes.Equal(before, after) {
		t.Error("the refused start changed the accounts file")
	}
	fresh, _, exited, _ := runUntilListening(t, t.TempDir(), []string{"FISCAL402_DEMO_KEY=sk_test_chosen_0123456789"})
	if exited || strings.Contains(fresh, "sk_test_chosen") {
		t.Errorf("a chosen key was printed at creation (or exited %v):\n%s", exited, fresh)
	}
}

// TestRotateReceiptKeyRefusedWhileRunning (issue 19 item 10): the real
// binary refuses -rotate-receipt-key while a server runs on the data
// directory, and the running server's receipts keep verifying; once it is
// stopped, the rotation works.
func TestRotateReceiptKeyRefusedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	keys := func() []byte {
		t.Helper()
		status, raw := p.get(t, "/.well-known/jwks.json", false)
		if status != 200 {
			t.Fatalf("jwks: %d", status)
		}
		return raw
	}
	jwksBefore := keys()
	cmd := exec.Command(serverBinary(t), "-data", dir, "-rotate-receipt-key")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "a server is running on") {
		t.Fatalf("rotation under a running server: err %v\n%s", err, out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("exit: %v", err)
	}
	entries, _ := os.ReadDir(dir + "/keys")
	p.kill()
	// The refused rotation left the keys alone: a restart serves the same set.
	p = startServer(t, dir)
	if after := keys(); !bytes.Equal(after, jwksBefore) {
		t.Fatalf("the refused rotation changed the key set:\n%s\n%s", jwksBefore, after)
	}
	p.kill()
	if out, err := exec.Command(serverBinary(t), "-data", dir, "-rotate-receipt-key").CombinedOutput(); err != nil || !strings.Contains(string(out), "rotated") {
		t.Fatalf("rotation of a stopped server: %v\n%s", err, out)
	}
	if after, _ := os.ReadDir(dir + "/keys"); len(after) < len(entries) {
		t.Errorf("keys directory shrank: %d → %d", len(entries), len(after))
	}
}

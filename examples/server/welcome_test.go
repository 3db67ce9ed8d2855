package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWelcomeWithoutDemoAccount: on a data directory whose accounts file
// was made by "accounts create" (no demo account), the start said "demo
// account acct_demo: its key is not printed again (it was printed when
// created ...)", sending the operator to look for a key of an account that
// does not exist. The start mentions the demo account only when the file
// has one.
func TestWelcomeWithoutDemoAccount(t *testing.T) {
	data := t.TempDir()
	if _, stderr, err := runCommand(t, nil, "accounts", "create", "-data", data, "-id", "acct_shop", "-legal-name", "Shop Ltd", "-country", "IE",
		"-vat-number", "IE1234567T", "-legal-id", "IE-CRO-1", "-city", "Dublin", "-over-threshold"); err != nil {
		t.Fatalf("accounts create: %v\n%s", err, stderr)
	}
	cmd := exec.Command(serverBinary(t), "-data", data, "-listen", "127.0.0.1:0", "-fx-refresh=false")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FISCAL402_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	timeout := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server exited:\n%s", strings.Join(got, "\n"))
			}
			got = append(got, l)
			done = strings.HasPrefix(l, "chain eip155:1 ") // the last line of the start
		case <-timeout:
			t.Fatalf("no start within 30s:\n%s", strings.Join(got, "\n"))
		}
	}
	if all := strings.Join(got, "\n"); strings.Contains(all, demoAccountID) {
		t.Errorf("the start speaks of a demo account the accounts file does not have:\n%s", all)
	}
	if _, err := os.Stat(filepath.Join(data, "accounts.json")); err != nil {
		t.Fatal(err)
	}
}

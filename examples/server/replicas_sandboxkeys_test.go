package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestReplicaWithOtherSandboxKeysIsRefused: replicas on PostgreSQL share
// the sandbox's keys as they share the production ones (README "Several
// replicas on PostgreSQL": copy <data>/keys/ and <data>/sandbox/keys/; a
// replica whose keys differ refuses to start). A replica given the
// production keys but not the sandbox's made sandbox keys of its own,
// logged the sandbox log's key mismatch and served anyway: behind a load
// balancer every sandbox call it took failed (500) while the others
// answered, with nothing refused at start. It must refuse to start,
// naming the mismatch, before it listens.
func TestReplicaWithOtherSandboxKeysIsRefused(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startServerWith(t, dirA, nil, replicaLog(t, 0), "-store", url)
	a.kill()
	copyDir(t, filepath.Join(dirA, "keys"), filepath.Join(dirB, "keys"))
	raw, err := os.ReadFile(filepath.Join(dirA, "accounts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "accounts.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(serverBinary(t), "-data", dirB, "-listen", "127.0.0.1:0", "-fx-refresh=false", "-store", url)
	cmd.Env = append(os.Environ(), "FISCAL402_DEMO_KEY="+demoKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		l := false
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "fiscal402 listening on ") {
				l = true
				listening <- true
			}
		}
		if !l {
			listening <- false
		}
	}()
	select {
	case l := <-listening:
		if l {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("a replica whose sandbox keys differ from the shared sandbox log's started and listens; its log:\n%s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("neither listening nor refused within 30 s")
	}
	err = cmd.Wait()
	if err == nil || !strings.Contains(stderr.String(), "sandbox") || !strings.Contains(stderr.String(), "mismatch") {
		t.Fatalf("refused start: %v, log:\n%s\nwant a failed exit naming the sandbox's key mismatch", err, stderr.String())
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// runToExit runs the server binary on dataDir with extra flags and expects
// it to exit within 30 s; it returns stdout, stderr and the exit code.
func runToExit(t *testing.T, dataDir string, extra ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(serverBinary(t), append([]string{"-data", dataDir, "-listen", "127.0.0.1:0", "-fx-refresh=false"}, extra...)...)
	cmd.Env = append(os.Environ(), "FISCAL402_DEMO_KEY="+demoKey)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), errOut.String(), code
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the server started on a damaged ledger:\n%s", out.String())
	}
	return "", "", 0
}

// boltLeafValues calls fn with the offset and length of the value of every
// element of every bbolt leaf page of data whose value is vmin..vmax bytes
// (bbolt's page layout: a 16-byte page header, then 16-byte leaf elements
// of flags, pos, ksize, vsize, pos counted from the element).
func boltLeafValues(data []byte, vmin, vmax int, fn func(off, n int)) {
	pageSize := int(binary.LittleEndian.Uint32(data[24:]))
	for off := 2 * pageSize; off+pageSize <= len(data); off += pageSize {
		if binary.LittleEndian.Uint16(data[off+8:]) != 0x02 { // leaf
			continue
		}
		count := int(binary.LittleEndian.Uint16(data[off+10:]))
		for i := 0; i < count && 16+16*(i+1) <= pageSize; i++ {
			e := off + 16 + 16*i
			flags := binary.LittleEndian.Uint32(data[e:])
			pos, ks, vs := int(binary.LittleEndian.Uint32(data[e+4:])), int(binary.LittleEndian.Uint32(data[e+8:])), int(binary.LittleEndian.Uint32(data[e+12:]))
			v := e + pos + ks
			if flags == 0 && vs >= vmin && vs <= vmax && v+vs <= off+pageSize {
				fn(v, vs)
			}
		}
	}
}

// TestDamagedLedgerThroughBinary (issue 19 item 2): the real binary
// refuses a truncated or damaged ledger file with one line that names the
// remedy and a non-zero exit, quick or full check; and a file damaged
// under a running server never makes a read answer with a panic: every
// answer is the record or a problem document, and the server keeps serving.
func TestDamagedLedgerThroughBinary(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	var ids []string
	for n := range 40 {
		status, body := p.post(n)
		if status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
		var rec struct{ ID string }
		_ = json.Unmarshal(body, &rec)
		ids = append(ids, rec.ID)
	}
	// A clean stop: the damage below is the file's alone, with no journal
	// to replay onto it.
	p.stop(t)
	path := filepath.Join(dir, "ledger.db")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Record-sized values: the records, receipts and invoices' parts.
	damaged := bytes.Clone(good)
	flipped := 0
	boltLeafValues(damaged, 200, 4000, func(off, n int) { damaged[off+n/2] ^= 0x55; flipped++ })
	if flipped == 0 {
		t.Fatal("found no record-sized leaf values to damage")
	}
	headers := bytes.Clone(good)
	for off := 2 * 4096; off < len(headers); off += 4096 {
		headers[off+16+4] ^= 0xff // the first element's pos of every page
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		flags []string
	}{
		{"truncated", good[:len(good)/2], nil},
		{"truncated, full check", good[:len(good)/3], []string{"-check", "full"}},
		{"page elements damaged", headers, nil},
		{"record values damaged, full check", damaged, []string{"-check", "full"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runToExit(t, dir, tc.flags...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "refusing to start") || !strings.Contains(lines[0], "is damaged") || !strings.Contains(lines[0], "restore it from the latest backup") {
				t.Errorf("exit %d, stderr %d lines (want 1 naming the damage and the remedy):\n%s", code, len(lines), errOut)
			}
			if strings.Contains(errOut+out, "goroutine ") || strings.Contains(errOut+out, "panic") || strings.Contains(out, "listening") {
				t.Errorf("a panic or a start:\n%s\n%s", out, errOut)
			}
		})
	}
	if _, errOut, code := runToExit(t, dir, "-check", "sometimes"); code == 0 || !strings.Contains(errOut, "want quick or full") {
		t.Errorf("-check sometimes: exit %d %s", code, errOut)
	}

	// Damage under a running server: every read answers the record or a
	// problem document, never a panic, and the server stays up.
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	p = startServerWith(t, dir, nil, logs)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(damaged, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	problems := 0
	check := func(path string, auth bool) {
		status, raw := p.get(t, path, auth)
		switch {
		case status == 200:
		case status == 500 && json.Valid(raw) && bytes.Contains(raw, []byte(`"code":"LEDGER_INTEGRITY"`)):
			problems++
			if problems <= 3 {
				t.Logf("GET %s: %d %.300s", path, status, raw)
			}
		default:
			t.Errorf("GET %s: %d %.200s", path, status, raw)
		}
	}
	check("/settlements?limit=200", true)
	for _, id := range ids {
		check("/settlements/"+id, true)
		check("/settlements/"+id+"/ubl", true)
		check("/v1/receipts/rcpt_"+id, false)
	}
	if problems == 0 {
		t.Error("no read met the damage: the test damaged nothing that is served")
	}
	if status, _ := p.get(t, "/healthz", false); status != 200 {
		t.Errorf("healthz after the damaged reads: %d", status)
	}
	if strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("a stack trace in the log:\n%s", logs.String())
	}
	t.Logf("%d leaf values damaged; %d of %d reads answered a problem document", flipped, problems, 1+3*len(ids))
}

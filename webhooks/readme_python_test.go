package webhooks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestREADMEPythonVerifier runs the Python receiver check the README gives
// beside VerifyRequest against deliveries signed here: it must accept a
// delivery signed with the receiver's secret and, like Verify, refuse one
// signed with an empty key when the receiver's only secret is empty (an
// unset variable), which anyone can compute.
func TestREADMEPythonVerifier(t *testing.T) {
	python := testtool.LookPath(t, "python3")
	readme, err := os.ReadFile(filepath.Join(testtool.RepoDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "or by hand, in Python:\n\n```python\n")
	if i < 0 {
		t.Fatal("README.md: the Python verifier block is not found")
	}
	code := text[i+len("or by hand, in Python:\n\n```python\n"):]
	code = code[:strings.Index(code, "```")]

	now := time.Now().Unix()
	ts := strconv.FormatInt(now, 10)
	body := `{"id":"evt_1","type":"settlement.processed"}`
	good := webhooks.SignatureHeader(now, []byte(body), "whsec_test")
	forged := webhooks.SignatureHeader(now, []byte(body), "")
	script := code + `
import sys
body = ` + strconv.Quote(body) + `.encode()
print(verify(["whsec_test"], ` + strconv.Quote(good) + `, ` + strconv.Quote(ts) + `, body))
print(verify([""], ` + strconv.Quote(forged) + `, ` + strconv.Quote(ts) + `, body))
print(verify([], ` + strconv.Quote(forged) + `, ` + strconv.Quote(ts) + `, body))
`
	f := filepath.Join(t.TempDir(), "verify.py")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, f).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(out)), []string{"True", "False", "False"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("README's Python verify: own secret, empty secret, no secret = %v; want %v", got, want)
	}
}

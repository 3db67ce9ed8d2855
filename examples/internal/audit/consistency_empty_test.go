package audit

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/ledger"
)

// signedCheckpoint writes a checkpoint note of size entries and root,
// signed by skey, to a file in dir.
func signedCheckpoint(t *testing.T, dir, name, skey, origin string, size int64, root tlog.Hash) string {
	t.Helper()
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", origin, size, root)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, msg, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two checkpoints of the empty log must both sign the root of the empty
// tree: a second one of 0 entries that signs another root is a malformed
// (or forked) checkpoint, never "the same tree".
func TestConsistencyEmptyTreeBothCheckpoints(t *testing.T) {
	dir := t.TempDir()
	const origin = "audit.example/empty-log"
	skey, vkey, err := ledger.GenerateLogKey(origin, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := tlog.TreeHash(0, nil)
	other := tlog.Hash(sha256.Sum256([]byte("not the empty tree")))
	good := signedCheckpoint(t, dir, "empty.txt", skey, origin, 0, empty)
	bad := signedCheckpoint(t, dir, "bad-empty.txt", skey, origin, 0, other)

	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(append(args, "--log-key", vkey), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := run("consistency", good, good); code != ExitOK {
		t.Fatalf("two empty-tree checkpoints: exit %d, want %d:\n%s", code, ExitOK, out)
	}
	for _, args := range [][]string{{good, bad}, {bad, good}} {
		code, out := run("consistency", args[0], args[1])
		if code != ExitFailed || strings.HasPrefix(out, "CONSISTENT") || !strings.Contains(out, `check "empty-tree"`) {
			t.Errorf("consistency %s %s: exit %d, want %d with check \"empty-tree\":\n%s",
				filepath.Base(args[0]), filepath.Base(args[1]), code, ExitFailed, out)
		}
	}
}

package audit

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/returns"
)

// TestReturnCheckpointIsItsNote: the return states the log checkpoint it
// was computed at twice, as readable origin, size and root and as the
// signed note; the command reports the readable three as "(signature
// checked)", so it must check that they are the note's: a return whose
// figures name another tree than its signed checkpoint is refused, whoever
// signed it (c2sp.org/tlog-checkpoint: origin, size and root are the
// note's first three lines). The statement signature is left out here
// (no key set) so that only the checkpoint is judged.
func TestReturnCheckpointIsItsNote(t *testing.T) {
	w := buildReturnWorld(t)
	run := func(edit func(l *returns.LogCheckpoint)) string {
		r := w.doc
		edit(&r.Log)
		ret, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"object": "signed_oss_return", "return": json.RawMessage(ret), "jws": ""})
		a := &returnAudit{logKey: w.logKey, out: io.Discard}
		return a.run(raw, w.receipts)
	}
	if msg := run(func(*returns.LogCheckpoint) {}); msg != "" {
		t.Fatalf("genuine return: %s", msg)
	}
	for name, edit := range map[string]func(l *returns.LogCheckpoint){
		"size":   func(l *returns.LogCheckpoint) { l.Size++ },
		"root":   func(l *returns.LogCheckpoint) { l.Root = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
		"origin": func(l *returns.LogCheckpoint) { l.Origin += "/other" },
	} {
		if msg := run(edit); !strings.HasPrefix(msg, "checkpoint:") {
			t.Errorf("readable checkpoint %s differs from the signed note: %q, want a checkpoint failure", name, msg)
		}
	}
}

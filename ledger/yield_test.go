package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// TestGroupCommitWithOneP: with a single P (GOMAXPROCS=1, as Go sets it in
// a container limited to one CPU) concurrent appenders still share commits.
// The committer answers a batch from the only P; unless it yields it, no
// answered caller runs before the committer is back at its channel, and the
// first append to arrive is committed alone, then the next, one fsync pair
// each (Ledger.run; before the yield, 1.0 appends per commit at 64 engine
// callers).
func TestGroupCommitWithOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s, _, _ := testKey(t, testOrigin, "log key 1")
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"), Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const callers, each = 32, 16
	before := l.snapshotProfile()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				e, _ := simpleEntry(fmt.Sprintf("c%d-%d", c, i))(0)
				if _, err := l.Append(context.Background(), Append{Entry: &e}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	d := l.snapshotProfile().minus(before)
	if d.appended != callers*each {
		t.Fatalf("appended %d, want %d", d.appended, callers*each)
	}
	// With the yield a commit carries most of the callers (20-30 here);
	// committed one at a time it would be 1.
	if per := float64(d.appended) / float64(d.commits); per < 4 {
		t.Errorf("%d appends in %d commits (%.1f per commit) with one P: group commit did not group", d.appended, d.commits, per)
	} else {
		t.Logf("%d appends in %d commits (%.1f per commit)", d.appended, d.commits, per)
	}
}

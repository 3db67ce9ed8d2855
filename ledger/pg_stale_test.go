package ledger

import (
	"context"
	"errors"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestPostgresCheckpointUnreadableIsAnError: replica B cannot reach the
// database while replica A appends. B's Checkpoint (GET /v1/log/checkpoint,
// the head an OSS return is computed at, the checkpoint of a webhook
// event) must not answer the head B last saw as the latest one: that
// head is older than the one A acknowledged (a client that got a receipt
// from A would be shown a log without its entry, and an OSS return built
// at it would leave A's records out without saying so). It is
// ErrUnavailable, like every other read of the unreachable store, and the
// latest head once the database answers again.
func TestPostgresCheckpointUnreadableIsAnError(t *testing.T) {
	direct := pgtest.Schema(t)
	if direct == "" {
		return
	}
	px := pgtest.NewProxy(t, direct)
	a := openPG(t, direct)
	b := openPG(t, px.URL())
	if _, err := b.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(context.Background(), Append{Build: simpleEntry("by-a")}); err != nil {
		t.Fatal(err)
	}
	want, err := a.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	px.SetDown(true)
	cp, err := b.Checkpoint()
	switch {
	case err == nil && cp.Size < want.Size:
		t.Fatalf("B cut off from the database answers the checkpoint of size %d as the latest; A acknowledged size %d", cp.Size, want.Size)
	case err != nil && !errors.Is(err, ErrUnavailable):
		t.Fatalf("B cut off from the database: %v, want ErrUnavailable", err)
	}
	px.SetDown(false)
	cp, err = b.Checkpoint()
	if err != nil || cp.Size != want.Size || cp.Root != want.Root {
		t.Fatalf("B once the database answers: size %d, %v; want A's head of size %d", cp.Size, err, want.Size)
	}
}

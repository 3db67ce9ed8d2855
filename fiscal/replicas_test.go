package fiscal_test

import (
	"path/filepath"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// replicaEngines opens r engines (replicas) on one PostgreSQL schema, as
// servers of one deployment run: each its own data directory holding the
// first one's keys, cfg's accounts and clock, crypto/rand. Without a
// PostgreSQL server the test skips (fails under FISCAL402_STRICT=1).
func replicaEngines(t *testing.T, cfg fiscal.Config, r int) []*fiscal.Engine {
	t.Helper()
	cfg.Store = pgtest.Schema(t)
	cfg.Rand = nil
	engines := make([]*fiscal.Engine, r)
	for i := range r {
		c := cfg
		if i > 0 {
			c.Dir = t.TempDir()
			fiscaltest.CopyKeys(t, filepath.Join(cfg.Dir, "keys"), filepath.Join(c.Dir, "keys"))
		}
		engines[i] = fiscaltest.Engine(t, c)
	}
	return engines
}

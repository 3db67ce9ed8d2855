package ledger

import (
	"runtime"
	"time"
)

// measuredCPU runs f on one thread and returns the CPU time (user and
// system) the thread spent in it: f's own work, not inflated by other
// goroutines or processes waiting for the CPUs. The goroutine is locked to
// its thread only for f, which should not block (no fsync, no network): a
// locked goroutine that gives up its P comes back only through a handoff
// to its own thread. One that blocks is still measured right, only
// slower (a PostgreSQL plan that reads beyond the keys its commit loaded,
// which is rare). 0 where threadCPU is unavailable.
func measuredCPU(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	f()
	return threadCPU() - start
}

package receipt

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user and system) of the whole process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per op since start: the cost of
// a benchmark that other processes on a shared machine do not inflate, as
// they do wall time (ns/op).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((processCPU()-start).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
}

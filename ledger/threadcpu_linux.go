package ledger

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time (user and system) of the calling OS
// thread; the caller locks its goroutine to the thread (measuredCPU
// does).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU returns the CPU time (user and system) of the whole process,
// all threads: the work of a parallel check, however busy the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build !linux

package ledger

import "time"

// threadCPU is unavailable here: Stats.CommitterCPU stays 0.
func threadCPU() time.Duration { return 0 }

// processCPU is unavailable here: the benchmarks report 0.
func processCPU() time.Duration { return 0 }

//go:build !linux

package receipt

import (
	"testing"
	"time"
)

// processCPU is unavailable here: the benchmarks report 0.
func processCPU() time.Duration { return 0 }

func reportCPU(b *testing.B, start time.Duration) {}

//go:build !linux

package main

import "time"

// procCPU is only measured on Linux (/proc).
func procCPU(int) (time.Duration, bool) { return 0, false }

// selfCPU is only measured on Linux.
func selfCPU() (time.Duration, bool) { return 0, false }

// procPeakRSS is only measured on Linux (/proc).
func procPeakRSS(int) (int64, bool) { return 0, false }

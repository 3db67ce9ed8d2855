package webhooks

import (
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// WithFanOutEvery sets the shortest interval between fan-out writes, in
// real time, whatever the clock.
func WithFanOutEvery(o Options, every time.Duration) Options {
	o.fanOutEvery = every
	return o
}

// DispatcherWrites returns the write transactions of the service's
// dispatcher so far: all of them, and those of the fan-out.
func DispatcherWrites(s *Service) (all, fanOut int64) {
	return s.disp.writes.Load(), s.disp.fanWrites.Load()
}

// FanOutCursor returns the dispatcher's in-memory fan-out cursor.
func FanOutCursor(s *Service) int64 { return s.disp.cursor.Load() }

// StoredCursor reads the fan-out cursor stored in the ledger.
func StoredCursor(s *Service) (int64, error) {
	var c int64
	err := s.read(func(tx ledger.Tx) error {
		c = cursorOf(tx)
		return nil
	})
	return c, err
}

// CrashOnStop makes the dispatcher stop without storing its in-memory
// cursor, leaving the ledger as a kill -9 would.
func CrashOnStop(s *Service) { s.disp.crashOnStop.Store(true) }

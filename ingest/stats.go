package ingest

import (
	"encoding/binary"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// QueueStats is the state of the durable ingest queue, for monitoring.
type QueueStats struct {
	// Queued is how many x402 payments wait to be recorded (state queued).
	Queued int
	// OldestDue is when the earliest queued entry is or was due for its
	// next attempt; zero when the queue is empty. A time well in the past
	// means the queue is not being worked (the loop stopped, or
	// Options.NoQueue without a host calling Process).
	OldestDue time.Time
}

// QueueStats reads the queue's due index (one key per queued entry, in
// the order they are due) in one read transaction.
func (s *Service) QueueStats() (QueueStats, error) {
	var st QueueStats
	err := s.e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(bucketDue, nil, nil, false, func(k, _ []byte) bool {
			if st.Queued == 0 && len(k) >= 8 {
				st.OldestDue = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
			}
			st.Queued++
			return true
		})
	})
	if err != nil {
		return QueueStats{}, fiscal.StoreError(err)
	}
	return st, nil
}

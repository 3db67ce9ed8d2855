package ledger

import "fmt"

// Reserve takes name for one user of this Ledger, until release is called
// or the Ledger is closed: a later Reserve of the same name fails with
// ErrReserved. It is how the users of one open Ledger in one process keep
// to one background loop per side bucket they work through (one ECB
// refresh, one ingest queue, one webhook dispatcher per engine): two loops
// would race over the same queue and cursor. It holds nothing in the file
// and says nothing to other processes: replicas sharing a log take turns
// with Lease. release is idempotent.
func (l *Ledger) Reserve(name string) (release func(), err error) {
	if name == "" {
		return nil, fmt.Errorf("ledger: reserve %q: %w", name, ErrInvalid)
	}
	if l.closed.Load() {
		return nil, ErrClosed
	}
	l.reserveMu.Lock()
	defer l.reserveMu.Unlock()
	if l.reserved[name] {
		return nil, fmt.Errorf("ledger: %q: %w", name, ErrReserved)
	}
	if l.reserved == nil {
		l.reserved = map[string]bool{}
	}
	l.reserved[name] = true
	done := false
	return func() {
		l.reserveMu.Lock()
		defer l.reserveMu.Unlock()
		if !done {
			done = true
			delete(l.reserved, name)
		}
	}, nil
}

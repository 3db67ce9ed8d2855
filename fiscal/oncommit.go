package fiscal

import "github.com/fiscal402/fiscal402/ledger"

// commitCheck is one check a draft runs in the committer.
type commitCheck struct {
	reads []ledger.SideKey
	fn    func(h *ledger.Hook) error
}

// OnCommit adds a check that runs in the committer, in the entry's own
// ledger transaction, before anything of the entry is decided there
// (invoice number, running totals, log position): fn reads the side
// values reads declares (h.Get) and may write side values (h.Put); an
// error of fn fails the append and is returned by Engine.Commit. Checks run
// in the order they were added. A refund (package refunds) checks and
// advances what remains of its settlement with it, a summary invoice that
// its supplies did not change since it read them.
func (d *Draft) OnCommit(reads []ledger.SideKey, fn func(h *ledger.Hook) error) {
	d.checks = append(d.checks, commitCheck{reads: reads, fn: fn})
}

// commitChecks are the draft's checks, and last the check of a supply
// invoiced by a summary, decided on the draft as committed.
func (d *Draft) commitChecks() []commitCheck {
	out := d.checks
	if c := d.supplySummaryCheck(); c != nil {
		out = append(out[:len(out):len(out)], *c)
	}
	return out
}

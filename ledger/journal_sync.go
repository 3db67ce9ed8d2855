package ledger

import (
	"os"
	"sync"
	"sync/atomic"
)

// The journal's fdatasync runs behind the committer. A commit writes its
// batch record to the journal file and returns; a syncer goroutine
// fdatasyncs the file, as soon as the previous fdatasync is over, and each
// one makes every batch written before it began durable. Meanwhile the
// committer plans and commits the next batch: on 2 CPUs, the fdatasync
// (~0.6 ms) was time in which neither the committer nor the callers of
// the batch being synced did anything (bench/HISTORY.md, stop 49).
//
// Nothing of a batch is seen before it is durable:
//   - its appends are answered once the syncer made it durable
//     (Ledger.answerDurable waits for durability.wait of the batch's
//     transaction);
//   - the Ledger's size and checkpoint move then too;
//   - a read transaction that would see it (a snapshot at or after the
//     batch's transaction) waits for durability first (boltStore.view),
//     so that an answer read from the ledger (a retried settlement found
//     by its claim) is never an answer a crash could take back;
//   - a checkpoint record written with a batch counts as durable only once
//     the batch is (jstate.settleSent).
//
// A failed fdatasync halts the store (and every later fdatasync of the
// journal fails too: journal.syncFile): every batch not yet durable fails,
// as do the commits after it, and the ledger must be opened again (its
// journal then decides what was durable).

// durability is how far the journal is durable: the newest bbolt
// transaction whose batch record is synced, or the error that halted the
// store.
type durability struct {
	tx   atomic.Uint64
	mu   sync.Mutex
	cond sync.Cond
	err  error
}

func newDurability(tx uint64) *durability {
	d := &durability{}
	d.cond.L = &d.mu
	d.tx.Store(tx)
	return d
}

// advance notes that transaction tx and every one before it are durable;
// after fail, nothing more is.
func (d *durability) advance(tx uint64) {
	if d.tx.Load() >= tx {
		return
	}
	d.mu.Lock()
	if d.tx.Load() < tx && d.err == nil {
		d.tx.Store(tx)
		d.cond.Broadcast()
	}
	d.mu.Unlock()
}

// fail notes that nothing after the durable transaction will become
// durable (the store halted with err).
func (d *durability) fail(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
		d.cond.Broadcast()
	}
	d.mu.Unlock()
}

// wait waits until transaction tx is durable, or returns the error that
// halted the store before it was.
func (d *durability) wait(tx uint64) error {
	if d.tx.Load() >= tx {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.tx.Load() < tx && d.err == nil {
		d.cond.Wait()
	}
	if d.tx.Load() >= tx {
		return nil
	}
	return d.err
}

// jsyncer fdatasyncs the journal behind the committer.
type jsyncer struct {
	mu sync.Mutex
	f  *os.File // the file the newest batch went to
	tx uint64   // the newest batch written
	// kick wakes the syncer after a write (one pending wake-up is
	// enough: it syncs whatever is newest when it wakes).
	kick chan struct{}
	done chan struct{}
	sync func(*os.File) error
	dur  *durability
	// halt stops the store for a failed fdatasync.
	halt func(f *os.File, err error)
}

func startSyncer(sync func(*os.File) error, dur *durability, halt func(*os.File, error)) *jsyncer {
	y := &jsyncer{kick: make(chan struct{}, 1), done: make(chan struct{}), sync: sync, dur: dur, halt: halt}
	go y.run()
	return y
}

// wrote hands the batch of transaction tx, just written to f, to the
// syncer.
func (y *jsyncer) wrote(f *os.File, tx uint64) {
	y.mu.Lock()
	y.f, y.tx = f, tx
	y.mu.Unlock()
	select {
	case y.kick <- struct{}{}:
	default:
	}
}

func (y *jsyncer) run() {
	defer close(y.done)
	for range y.kick {
		y.mu.Lock()
		f, tx := y.f, y.tx
		y.mu.Unlock()
		if tx <= y.dur.tx.Load() {
			continue
		}
		// Every batch up to tx is written (wrote comes after the write),
		// to f or, before a switch of files, to the other file, which
		// the switch synced.
		if err := y.sync(f); err != nil {
			y.halt(f, err) // once halted, the store takes no more commits
			continue
		}
		y.dur.advance(tx)
	}
}

// stop ends the syncer once it has synced what it was handed (no wrote
// may follow).
func (y *jsyncer) stop() {
	close(y.kick)
	<-y.done
}

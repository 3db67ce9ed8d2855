package fiscal

import (
	"io"
)

// Sealing off the committer (issue 22). An entry is sealed in the caller's
// goroutine, before the ledger's single committer sees it: the invoice with
// its number, the record document with its log index, the receipt's
// commitments and its sealed 4.0.0 payload (no signature: the checkpoint's
// cosignature covers it). The two things that depend on
// the order of appends are predicted (ledger.Predictor, one per engine),
// and the committer compares:
//
//   - the log index (the record states it, and the receipt commits to the
//     record's SHA-256);
//   - the invoice number (in the UBL, the record and the signed claims),
//     per series.
//
// Equal, the entry is written as sealed; otherwise the committer seals it
// again with the true index and number (the old path), replaying the random
// bytes the first seal drew, so the result is exactly what sealing once at
// that position gives. Numbering stays gap-free and in append order, and
// the index stays the committer's, whatever the prediction. The Art. 59c
// running total is checked there as before (totals.go).
//
// Why predictions missed (measured with 64 callers on 2 cores, 5-12 % of
// appends): not appends overtaking each other within a batch, but one
// caller descheduled for milliseconds between predicting and reaching the
// committer (any wait of a goroutine among 64 runnable ones costs a turn of
// the run queue), while the committer held its successors for one batch
// only; then every append predicted after it landed one index early, a
// cascade of ten to fifty re-seals per stall. Now:
//
//   - the committer holds the appends behind a missing slot for as long as
//     the predictor says it is still coming (Append.Pending), at most
//     ledger.MaxHold per missing position;
//   - a prediction still unsent after a millisecond while the committer
//     waits for it is revoked: its slot goes to the next prediction, and
//     its caller predicts again before sending (ledger.Prediction.Send),
//     sealing again in its own goroutine only if it got another slot;
//   - a slot not taken (the append failed, found its claim held, or filled
//     a gap lower down) goes to the next prediction of its series instead
//     of moving every later one;
//   - when nobody comes for a slot, the last append of the batch fills it:
//     one re-seal in the committer, not one per append; the slot's owner,
//     if it was already sent, takes the filler's slot and goes last in its
//     batch when it arrives (a second re-seal, and no more).
//
// The entry is compressed (ledger.Prepare) before that last check, so that
// a stall while compressing can be revoked too. What remains: a caller
// stalled after it sent for longer than MaxHold, and appends that did not
// come through Commit in between (their indexes were not predicted).

// replay records the random bytes a seal draws and serves them again to a
// second seal of the same draft, so that sealing again (in the committer,
// or after a revoked prediction) gives the same salts. Its src is the
// engine's locked reader (Engine.rand), held only while it reads: the
// sealing around it runs in parallel.
type replay struct {
	src     io.Reader // safe for concurrent use (Engine.rand)
	log     []byte
	pos     int
	playing bool
}

func (r *replay) Read(b []byte) (int, error) {
	if r.playing && r.pos < len(r.log) {
		n := copy(b, r.log[r.pos:])
		r.pos += n
		return n, nil
	}
	n, err := io.ReadFull(r.src, b)
	if !r.playing {
		r.log = append(r.log, b[:n]...)
	}
	return n, err
}

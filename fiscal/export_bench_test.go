package fiscal

// NumberingStats reports how many appends the committer wrote as sealed
// and how many it sealed again (predict.go), for the benchmarks.
func NumberingStats(e *Engine) (hits, misses int64) {
	st := e.predict.Stats()
	return st.Hits, st.Misses
}

// PredictionsRevoked reports how many predictions were revoked before their
// append was sent (and made again by the caller).
func PredictionsRevoked(e *Engine) int64 { return e.predict.Stats().Revoked }

// SealForBench does what Commit does with an issued draft before the
// committer: numbers its invoice n and seals it at index (the record's
// JSON, the receipt's commitments and leaf).
func SealForBench(e *Engine, d *Draft, index, n int64) error {
	if d.ublDraft != nil {
		if err := e.numberAs(d, n); err != nil {
			return err
		}
	}
	// The draft's buffers are kept across calls, as Commit's are across a
	// settlement's seals.
	_, _, _, err := e.seal(d, index, &replay{src: e.rand}, e.sealBuffers(d))
	return err
}

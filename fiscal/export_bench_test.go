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

package fiscal

// NumberingStats reports how many appends the committer wrote as sealed
// and how many it sealed again (predict.go), for the benchmarks.
func NumberingStats(e *Engine) (hits, misses int64) {
	return e.predict.hits.Load(), e.predict.misses.Load()
}

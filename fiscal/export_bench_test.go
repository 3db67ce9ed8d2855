package fiscal

// NumberingStats reports how many invoice-number predictions the committer
// confirmed and how many it sealed again (place.go), for the benchmarks.
func NumberingStats(e *Engine) (hits, misses int64) {
	return e.numbers.hits.Load(), e.numbers.misses.Load()
}

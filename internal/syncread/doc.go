// Package syncread makes a reader that is not safe for concurrent use
// safe for it: Config.Rand of the engine (fiscal) and Options.Rand of the
// webhooks service may be any io.Reader, a deterministic one included,
// and are read from many goroutines. One package, so that the engine and
// an accessory holding the same reader share one lock, not two.
package syncread

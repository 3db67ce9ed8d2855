// Package archtest holds tests of the repository's shape: the size limits
// of the engine core (package fiscal), measured from its source, so that
// the core cannot regrow unnoticed, the floors of ARCHITECTURE.md
// (every import points down), and that no file cites a note that is not
// published with the repository (research notes, the design page, the
// shared data beside it) instead of a public source. It has no code of its
// own.
package archtest

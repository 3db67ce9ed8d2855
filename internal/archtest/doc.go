// Package archtest holds tests of the repository's shape: the size limits
// of the engine core (package fiscal), measured from its source, so that
// the core cannot regrow unnoticed, and the floors of ARCHITECTURE.md
// (every import points down). It has no code of its own.
package archtest

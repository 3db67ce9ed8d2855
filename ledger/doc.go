// Package ledger is the append-only store of fiscal records: a bbolt file
// holding the entries, their indexes and an RFC 6962 Merkle log with signed
// checkpoints.
package ledger

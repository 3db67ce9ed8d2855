// Package anchor says which SHA-256 an entry's leaf commits each of its
// documents to (the record, the invoice), whatever the receipt version, and
// checks every entry of a ledger against them: its one job is the link
// between the log, which covers leaves, and the documents stored beside
// them, which it does not. The engine reads every document it serves
// through Digest (fiscal/integrity.go) and runs CheckDocuments in its full
// check at start.
package anchor

// Package jsontop reads a few named members of a JSON object's top level
// without decoding the rest: its one job is the head of a stored document
// (its id, kind and account) and the fields of a receipt payload that the
// engine's integrity checks read, on every document it serves or lists.
//
// encoding/json validates and decodes the whole object (a 5 KB record) to
// fill three strings; Raw walks the top level once, skipping nested values
// by their brackets and strings, and allocates only its result.
//
// What Raw checks: the document is one object; member names and string
// values are well-formed JSON strings (no raw control characters, a
// backslash always escapes something); members are separated by ':' and
// ','. It does not check bracket kinds inside nested values, nor the
// spelling of numbers and literals, so a document it accepts may still be
// one encoding/json refuses: callers that need the whole document valid
// decode it. On what encoding/json accepts, Raw returns the same bytes
// (FuzzRawMatchesEncodingJSON). Names match exactly, unlike encoding/json's
// case-insensitive field matching, and a named member given twice is an
// error, where encoding/json keeps the last.
package jsontop

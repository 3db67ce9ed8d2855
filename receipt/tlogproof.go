package receipt

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// TlogProofHeader is the first line of a C2SP tlog-proof (c2sp.org/tlog-proof,
// §"Format").
const TlogProofHeader = "c2sp.org/tlog-proof@v1"

// maxProofHashes bounds an inclusion proof: a tree with fewer than 2^63
// leaves is at most 63 levels deep (RFC 6962 §2.1.1).
const maxProofHashes = 63

// ErrMalformedTlogProof is matched (errors.Is) by every ParseTlogProof error.
var ErrMalformedTlogProof = errors.New("receipt: malformed tlog-proof")

// FormatTlogProof renders a C2SP tlog-proof@v1
// (https://github.com/C2SP/C2SP/blob/main/tlog-proof.md):
//
//	c2sp.org/tlog-proof@v1
//	index <index>
//	<base64 hash>        one line per proof hash, leaf's sibling first
//	…
//	<empty line>
//	<checkpointNote verbatim, signatures and cosignatures included>
//
// The optional "extra" line is never written: a receipt needs no
// unauthenticated data to recompute its leaf hash (the leaf is the JWS).
func FormatTlogProof(index int64, proof tlog.RecordProof, checkpointNote []byte) string {
	var b strings.Builder
	b.Grow(len(TlogProofHeader) + 32 + 45*len(proof) + len(checkpointNote))
	b.WriteString(TlogProofHeader)
	b.WriteString("\nindex ")
	b.WriteString(strconv.FormatInt(index, 10))
	b.WriteByte('\n')
	for _, h := range proof {
		b.WriteString(h.String()) // standard base64, RFC 4648 §4
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(checkpointNote)
	return b.String()
}

// ParseTlogProof parses a C2SP tlog-proof@v1. It is strict where the
// format leaves room for two spellings of one value: the index has no
// leading zeros, every hash is canonical padded base64 of exactly 32 bytes.
// An "extra" line is accepted and dropped, since the format says its data is
// unauthenticated and must not be trusted. The checkpoint is returned
// verbatim and not verified here.
func ParseTlogProof(s string) (index int64, proof tlog.RecordProof, checkpointNote []byte, err error) {
	fail := func(format string, args ...any) (int64, tlog.RecordProof, []byte, error) {
		return 0, nil, nil, fmt.Errorf("%w: %s", ErrMalformedTlogProof, fmt.Sprintf(format, args...))
	}
	line, rest, ok := strings.Cut(s, "\n")
	if !ok || line != TlogProofHeader {
		return fail("first line is not %q", TlogProofHeader)
	}
	line, rest, ok = strings.Cut(rest, "\n")
	if extra, isExtra := strings.CutPrefix(line, "extra "); ok && isExtra {
		if _, err := decodeB64StdStrict(extra); err != nil || extra == "" {
			return fail("extra data is not base64")
		}
		line, rest, ok = strings.Cut(rest, "\n")
	}
	num, isIndex := strings.CutPrefix(line, "index ")
	if !ok || !isIndex {
		return fail(`no "index" line`)
	}
	index, err = strconv.ParseInt(num, 10, 64)
	if err != nil || index < 0 || strconv.FormatInt(index, 10) != num {
		return fail("index %q is not a decimal without leading zeros", num)
	}
	proof = tlog.RecordProof{}
	for {
		line, rest, ok = strings.Cut(rest, "\n")
		if !ok {
			return fail("no empty line before the checkpoint")
		}
		if line == "" {
			break
		}
		if len(proof) == maxProofHashes {
			return fail("more than %d proof hashes", maxProofHashes)
		}
		raw, err := decodeB64StdStrict(line)
		if err != nil || len(raw) != tlog.HashSize {
			return fail("proof line %d is not a base64 SHA-256 hash", len(proof)+1)
		}
		proof = append(proof, tlog.Hash(raw))
	}
	if rest == "" {
		return fail("no checkpoint")
	}
	return index, proof, []byte(rest), nil
}

// checkpoint is the text of a C2SP tlog-checkpoint note.
type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// parseCheckpoint parses a checkpoint note text (c2sp.org/tlog-checkpoint,
// §"Note text"): origin, tree size in decimal without leading zeros, base64
// RFC 6962 root, then optional non-empty extension lines, each line ending in
// a newline. tlog.ParseTree cannot be used: its first line is the fixed
// "go.sum database tree" (https://pkg.go.dev/golang.org/x/mod/sumdb/tlog#FormatTree).
func parseCheckpoint(text string) (checkpoint, error) {
	if !strings.HasSuffix(text, "\n") {
		return checkpoint{}, errors.New("checkpoint text does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return checkpoint{}, errors.New("checkpoint has fewer than 3 lines")
	}
	var c checkpoint
	c.origin = lines[0]
	if c.origin == "" {
		return checkpoint{}, errors.New("checkpoint origin is empty")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return checkpoint{}, fmt.Errorf("checkpoint tree size %q is not a decimal without leading zeros", lines[1])
	}
	c.size = n
	raw, err := decodeB64StdStrict(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		return checkpoint{}, fmt.Errorf("checkpoint root %q is not a base64 SHA-256 hash", lines[2])
	}
	c.root = tlog.Hash(raw)
	for i, ext := range lines[3:] {
		if ext == "" {
			return checkpoint{}, fmt.Errorf("checkpoint extension line %d is empty", i+1)
		}
	}
	return c, nil
}

// splitNote returns the text of a signed note and its signature lines
// (c2sp.org/signed-note: text, a blank line, then "— name base64" lines), or
// false when msg has no signature block.
func splitNote(msg []byte) (text []byte, sigLines []string, ok bool) {
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 {
		return nil, nil, false
	}
	sigs := string(msg[i+2:])
	if !strings.HasSuffix(sigs, "\n") {
		return nil, nil, false
	}
	return msg[:i+1], strings.Split(strings.TrimSuffix(sigs, "\n"), "\n"), true
}

// checkNoteSignatureEncoding rejects a signature line whose base64 is not
// canonical. golang.org/x/mod/sumdb/note decodes signatures leniently, so a
// flipped trailing bit would still verify; a receipt must not have two
// spellings, since auditors compare and archive checkpoints byte for byte.
func checkNoteSignatureEncoding(msg []byte) error {
	_, lines, ok := splitNote(msg)
	if !ok {
		return nil // note.Open reports the malformed note
	}
	for _, l := range lines {
		body, isSig := strings.CutPrefix(l, "— ")
		if !isSig {
			continue // malformed: note.Open reports it
		}
		_, b64, _ := strings.Cut(body, " ")
		if _, err := decodeB64StdStrict(b64); err != nil {
			return fmt.Errorf("signature line %q: %v", l, err)
		}
	}
	return nil
}

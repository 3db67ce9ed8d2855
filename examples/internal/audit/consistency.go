package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// Checks of "audit consistency", in the order they run.
const (
	checkOldCheckpoint = "old-checkpoint" // OLD is a checkpoint signed by the log key
	checkNewCheckpoint = "new-checkpoint" // NEW is a checkpoint signed by the log key
	checkOnlyGrew      = "only-grew"      // NEW has at least OLD's entries
	checkEmptyTree     = "empty-tree"     // a checkpoint of size 0 has the root of the empty tree
	checkSameSize      = "same-size"      // two checkpoints of one size sign one root
	checkProof         = "proof"          // the proof is for these two sizes
	checkConsistency   = "consistency"    // the proof leads from the old root to the new root (RFC 6962 §2.1.2)
)

var consistencyWords = map[string]string{
	checkOldCheckpoint: "the old checkpoint must be signed by the log key",
	checkNewCheckpoint: "the new checkpoint must be signed by the log key",
	checkOnlyGrew:      "the new checkpoint must have at least the old one's entries: a log only grows",
	checkEmptyTree:     "a checkpoint of 0 entries must sign the root of the empty tree",
	checkSameSize:      "two checkpoints of the same size must sign the same root",
	checkProof:         "the proof must be for the two checkpoints' sizes",
	checkConsistency:   "the new checkpoint's tree must extend the old one (RFC 6962 §2.1.2)",
}

// consistencyProof is the JSON of GET /v1/log/proof/consistency
// (httpserver.ConsistencyProof): roots and hashes are base64.
type consistencyProof struct {
	From     int64       `json:"from"`
	To       int64       `json:"to"`
	FromRoot tlog.Hash   `json:"fromRoot"`
	ToRoot   tlog.Hash   `json:"toRoot"`
	Hashes   []tlog.Hash `json:"hashes"`
}

func runConsistency(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit consistency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lk logKeyFlags
	lk.register(fs)
	proofPath := fs.String("proof", "", "the consistency proof, as served by GET /v1/log/proof/consistency?from=OLD_SIZE&to=NEW_SIZE")
	server := fs.String("server", "", "base URL of the fiscal402 service to fetch the proof (and, if not given, the log key) from; only when asked")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audit consistency OLD NEW (--log-key KEY | --log-key-file FILE) [--proof FILE | --server URL]")
		fmt.Fprintln(stderr, "\nProves that the log's checkpoint NEW extends checkpoint OLD: the log only grew between them, nothing was")
		fmt.Fprintln(stderr, "removed or rewritten. OLD and NEW are signed checkpoints (GET /v1/log/checkpoint) or receipts, whose")
		fmt.Fprintln(stderr, "tlog_proof ends in one. Checkpoints of different sizes need a consistency proof (--proof or --server).")
		fmt.Fprintln(stderr, "OLD is the checkpoint you saw first: a NEW with fewer entries fails the check (exit 1), the log shrank.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 2 {
		fs.Usage()
		return ExitUsage
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "audit consistency: %v\n", err)
		return inputExit(err)
	}
	f := newFetcher(*server)
	key, err := lk.value(f, receipt.PathLogKey)
	if err != nil {
		return usageErr(err)
	}
	if key == "" {
		return usageErr(fmt.Errorf("give --log-key KEY or --log-key-file FILE: the log's note verifier key, published at GET %s (sandbox: GET %s)", receipt.PathLogKey, receipt.PathSandboxLogKey))
	}
	verifier, err := note.NewVerifier(key)
	if err != nil {
		return usageErr(fmt.Errorf("%q is not a log verifier key (%v): it has the form origin+hash+base64; copy it from GET %s", key, err, receipt.PathLogKey))
	}
	notes := make([][]byte, 2)
	for i, p := range pos {
		raw, err := readFile(p)
		if err != nil {
			return usageErr(err)
		}
		if notes[i], err = checkpointNote(raw); err != nil {
			return usageErr(fmt.Errorf("%s: %v", p, err))
		}
	}
	fail := func(check, msg string) int {
		fmt.Fprintf(stdout, "NOT CONSISTENT: check %q failed: %s\n", check, consistencyWords[check])
		fmt.Fprintf(stdout, "  What  %s\n", wrap(msg, 90, "        "))
		return ExitFailed
	}
	var cps [2]ledger.Checkpoint
	for i, check := range []string{checkOldCheckpoint, checkNewCheckpoint} {
		cp, err := ledger.ParseCheckpoint(notes[i], verifier)
		if err != nil {
			return fail(check, fmt.Sprintf("%s is not a checkpoint signed by the log key %s+%08x: %v. A checkpoint altered after signing, or signed by another log, proves nothing.",
				pos[i], verifier.Name(), verifier.KeyHash(), strings.TrimPrefix(err.Error(), "ledger: ")))
		}
		cps[i] = cp
	}
	old, cur := cps[0], cps[1]
	if old.Size > cur.Size {
		// The order is the auditor's (OLD is the checkpoint seen first); a
		// checkpoint carries no time, so a swap cannot be told from a log
		// that shrank. Given in the documented order, this is evidence.
		return fail(checkOnlyGrew, fmt.Sprintf("the new checkpoint %s has %s, fewer than the %s of the old checkpoint %s: both are signed by the log key, so if %s is the one you saw later, the log shrank (entries were removed or the log was rolled back). Keep both files and report it. If you gave them in the wrong order, run again with the checkpoint you saw first as OLD.",
			pos[1], entries(cur.Size), entries(old.Size), pos[0], pos[1]))
	}
	// Each checkpoint of 0 entries, OLD's and NEW's, must sign the empty
	// tree's root: two of them otherwise differ, and neither is "the same
	// tree" as the other.
	emptyRoot, _ := tlog.TreeHash(0, nil)
	for i, cp := range cps {
		if cp.Size == 0 && cp.Root != emptyRoot {
			return fail(checkEmptyTree, fmt.Sprintf("%s has 0 entries but signs root %s, not SHA-256 of nothing (%s). The log key signed a malformed checkpoint: report it.", pos[i], cp.Root, emptyRoot))
		}
	}
	var proofFrom string
	switch {
	case old.Size == 0:
		proofFrom = "none needed: the empty tree is the start of every tree"
	case old.Size == cur.Size:
		if old.Root != cur.Root {
			return fail(checkSameSize, fmt.Sprintf("both checkpoints have %d entries, but %s signs root %s and %s signs root %s: the log key signed two different histories of the same length (a fork). Keep both files: together they prove it. Report it to the service's operator and to anyone relying on the log.",
				old.Size, pos[0], old.Root, pos[1], cur.Root))
		}
		proofFrom = "none needed: both checkpoints sign the same tree"
	default:
		var raw []byte
		switch {
		case *proofPath != "":
			raw, err = readFile(*proofPath)
			proofFrom = *proofPath
		case f != nil:
			path := fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", old.Size, cur.Size)
			raw, err = f.get(path)
			proofFrom = f.base + path
		default:
			return usageErr(fmt.Errorf("the checkpoints have %d and %d entries: a consistency proof is needed. Give --proof FILE (saved from GET /v1/log/proof/consistency?from=%d&to=%d) or --server URL to fetch it",
				old.Size, cur.Size, old.Size, cur.Size))
		}
		if err != nil {
			return usageErr(err)
		}
		var p consistencyProof
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return usageErr(fmt.Errorf("%s is not a consistency proof (the JSON of GET /v1/log/proof/consistency): %v", proofFrom, err))
		}
		if p.From != old.Size || p.To != cur.Size {
			return fail(checkProof, fmt.Sprintf("the proof is from %d to %d entries, the checkpoints have %d and %d. Get the proof for these sizes: GET /v1/log/proof/consistency?from=%d&to=%d.",
				p.From, p.To, old.Size, cur.Size, old.Size, cur.Size))
		}
		if err := tlog.CheckTree(p.Hashes, cur.Size, cur.Root, old.Size, old.Root); err != nil {
			msg := fmt.Sprintf("the proof does not lead from the old root %s (%s) to the new root %s (%s).", old.Root, entries(old.Size), cur.Root, entries(cur.Size))
			if p.FromRoot != (tlog.Hash{}) && p.FromRoot != old.Root {
				msg += fmt.Sprintf(" The proof's source says the tree of %s has root %s, not the signed %s: it shows another history for entries the old checkpoint covered, so the log was rewritten (a fork), or the proof comes from another log.",
					entries(old.Size), p.FromRoot, old.Root)
			} else {
				msg += " The proof was altered or belongs to other checkpoints; if a fresh proof fails too, the log is not append-only."
			}
			msg += " Keep both checkpoints: each is signed by the log key, and together with a failing proof they are evidence to report."
			return fail(checkConsistency, msg)
		}
		proofFrom = fmt.Sprintf("%d %s (RFC 6962 §2.1.2), from %s", len(p.Hashes), plural(int64(len(p.Hashes)), "hash", "hashes"), proofFrom)
	}
	if old.Size == cur.Size {
		fmt.Fprintf(stdout, "CONSISTENT: both checkpoints sign the same tree of %s of the log %s\n", entries(cur.Size), cur.Origin)
	} else {
		fmt.Fprintf(stdout, "CONSISTENT: the log %s only grew, from %s to %s\n", cur.Origin, entries(old.Size), entries(cur.Size))
	}
	fmt.Fprintf(stdout, "  Old checkpoint  %s, root %s (%s)\n", entries(old.Size), old.Root, pos[0])
	fmt.Fprintf(stdout, "  New checkpoint  %s, root %s (%s)\n", entries(cur.Size), cur.Root, pos[1])
	fmt.Fprintf(stdout, "  Proof           %s\n", proofFrom)
	fmt.Fprintf(stdout, "%s\n", wrap(fmt.Sprintf("Both checkpoints are signed by the log key %s+%08x, and the new tree begins with exactly the old tree's %s: nothing was removed or rewritten between them.",
		verifier.Name(), verifier.KeyHash(), entries(old.Size)), 96, ""))
	return ExitOK
}

// entries is "1 entry", "5 entries".
func entries(n int64) string { return fmt.Sprintf("%d %s", n, plural(n, "entry", "entries")) }

// checkpointNote returns the signed checkpoint a file holds: the file
// itself, or the checkpoint at the end of a receipt's tlog_proof.
func checkpointNote(raw []byte) ([]byte, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var r receipt.Receipt
		if err := json.Unmarshal(raw, &r); err != nil || r.TlogProof == "" {
			return nil, fmt.Errorf("a JSON file here must be a receipt with a tlog_proof")
		}
		_, _, cpNote, err := receipt.ParseTlogProof(r.TlogProof)
		if err != nil {
			return nil, fmt.Errorf("the receipt's tlog_proof: %v", err)
		}
		return cpNote, nil
	}
	// A signed note ends with its last signature line and one newline;
	// the signatures cover the text before the blank line, never what
	// follows. A file saved with blank lines after it, or without the
	// final newline, is the same checkpoint.
	return append(bytes.TrimRight(raw, "\n"), '\n'), nil
}

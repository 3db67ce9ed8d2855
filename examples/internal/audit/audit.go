// Package audit is the auditor's command (examples/audit, and its alias
// examples/verify-receipt): it checks fiscal402 receipts, checkpoints and
// ledger files offline, from files, and says in words what they prove or
// which check failed.
//
// Subcommands:
//
//	audit receipt FILE|ID --jwks FILE --log-key KEY|--log-key-file FILE [--openings FILE] [--json] [-q]
//	audit consistency OLD NEW --log-key KEY|--log-key-file FILE [--proof FILE | --server URL]
//	audit ledger FILE --log-key KEY|--log-key-file FILE [--jwks FILE]
//	audit return RETURN.json --receipts DIR [--jwks FILE --log-key KEY|--log-key-file FILE]
//
// A receipt is verified with three inputs and no network (receipt.Verify):
// the receipt document, the receipt key set (GET /.well-known/jwks.json)
// and the log's note verifier key (GET /.well-known/log-key); sandbox
// receipts with the sandbox's (GET /sandbox/v1/jwks.json, GET
// /sandbox/v1/log-key). --server fetches what was not given as a file;
// auditors should instead archive the key set and the log key with the
// receipts they keep.
//
// "return" recomputes an OSS return (GET /v1/returns/oss, package returns)
// from the receipts of the ledger indexes its lines list: every line's
// record count, USDC total, the invoices' EUR sums and the figures at the
// period-end rate, the member state totals, the pending records, and that
// no receipt of an OSS supply in the quarter was left out; with the key set
// and the log key it also verifies the return's signature, its checkpoint
// and every receipt.
//
// Exit status (exitWords): 0 all checks hold; 1 a check failed (the output
// names the first); 2 a usage problem (a flag or argument missing or wrong,
// or a key set or log key that is not one); 3 an input could not be read (a
// missing or unreadable file, a server that did not answer). A script tells
// "verified" (0), "not verified: the evidence fails" (1), "the command is
// wrong" (2) and "try again when the input is there" (3) apart.
package audit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
)

// Exit statuses.
const (
	ExitOK         = 0
	ExitFailed     = 1 // a check failed on the evidence (changed, forged, of another log)
	ExitUsage      = 2 // the command line is wrong, or a key given is not one
	ExitUnreadable = 3 // an input could not be read (file, directory, server)
)

// exitWords says what each exit status means: the usage and the package
// documentation say it in these words, as do the README and the commands'
// documentation (a test holds them to it).
var exitWords = []string{
	ExitOK:         "all checks hold",
	ExitFailed:     "a check failed (the output names the first)",
	ExitUsage:      "a usage problem (a flag or argument missing or wrong, or a key set or log key that is not one)",
	ExitUnreadable: "an input could not be read (a missing or unreadable file, a server that did not answer)",
}

// exitStatusLine is exitWords as one sentence: "0 all checks hold; 1 ...".
func exitStatusLine() string {
	parts := make([]string, len(exitWords))
	for code, words := range exitWords {
		parts[code] = fmt.Sprintf("%d %s", code, words)
	}
	return strings.Join(parts, "; ")
}

// unreadableError is an input that could not be read: a file (missing,
// a directory, unreadable, too large to be one) or a server's answer.
type unreadableError struct{ err error }

func (e *unreadableError) Error() string { return e.err.Error() }
func (e *unreadableError) Unwrap() error { return e.err }

func unreadable(err error) error {
	if err == nil {
		return nil
	}
	return &unreadableError{err}
}

// inputExit is the exit status of a subcommand that could not run its
// checks: ExitUnreadable when an input could not be read, else ExitUsage.
func inputExit(err error) int {
	var u *unreadableError
	if errors.As(err, &u) {
		return ExitUnreadable
	}
	return ExitUsage
}

const usage = `usage: audit <subcommand> [arguments]

Subcommands, each offline and from files:
  receipt FILE --jwks FILE --log-key KEY   verify a receipt and say what it proves
  consistency OLD NEW --log-key KEY        prove that checkpoint NEW extends checkpoint OLD
  ledger FILE --log-key KEY [--jwks FILE]  check a copy of a ledger file entry by entry
  return FILE --receipts DIR [--jwks FILE --log-key KEY]
                                          recompute an OSS return from the receipts

Where the inputs come from (the issuing service publishes them):
  receipt      GET /v1/receipts/{id} (sandbox: GET /sandbox/v1/receipts/{id})
  key set      GET /.well-known/jwks.json (sandbox: GET /sandbox/v1/jwks.json)
  log key      GET /.well-known/log-key (sandbox: GET /sandbox/v1/log-key)
  checkpoint   GET /v1/log/checkpoint, or the end of any receipt's tlog_proof
  OSS return   GET /v1/returns/oss?period=YYYY-Qn (key required)

Run "audit <subcommand> -h" for its flags. "audit FILE --jwks ..." (no subcommand) is "audit receipt".
Exit status: `

// Main runs the command with args (without the program name). A first
// argument that is no subcommand runs "receipt", the command's former
// single use (examples/verify-receipt).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage+exitStatusLine()+".")
		return ExitUsage
	}
	switch args[0] {
	case "receipt":
		return runReceipt("audit receipt", args[1:], stdout, stderr)
	case "consistency":
		return runConsistency(args[1:], stdout, stderr)
	case "ledger":
		return runLedger(args[1:], stdout, stderr)
	case "return":
		return runReturn(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage+exitStatusLine()+".")
		return ExitOK
	}
	return runReceipt("audit receipt", args, stdout, stderr)
}

// VerifyReceipt runs the receipt subcommand under the name of the former
// command, examples/verify-receipt, with its flags.
func VerifyReceipt(args []string, stdout, stderr io.Writer) int {
	return runReceipt("verify-receipt", args, stdout, stderr)
}

// parseExit is the exit status of a subcommand whose flags did not parse:
// a help request (-h, which printed the usage) is no failure; anything else
// is a usage problem (the flag package printed what).
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return ExitUsage
}

// parseInterspersed parses flags that may follow positional arguments
// ("receipt FILE --jwks FILE"), which package flag alone stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// logKeyFlags are the two ways to give the log verifier key.
type logKeyFlags struct {
	key, file string
}

func (k *logKeyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.key, "log-key", "", "the log's note verifier key, origin+hash+base64 (published at GET "+receipt.PathLogKey+")")
	fs.StringVar(&k.file, "log-key-file", "", "a file holding the log's note verifier key")
}

// value returns the key given, read from its file, or fetched; "" when
// none was given and there is no fetcher.
func (k *logKeyFlags) value(f *fetcher, serverPath string) (string, error) {
	if k.key != "" && k.file != "" {
		return "", errors.New("give --log-key or --log-key-file, not both")
	}
	if k.key != "" {
		return strings.TrimSpace(k.key), nil
	}
	if k.file != "" {
		raw, err := readFile(k.file)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(raw)), nil
	}
	if f == nil {
		return "", nil
	}
	raw, err := f.get(serverPath)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(raw)), nil
}

// maxInput bounds every file read: receipts, key sets and proofs are a few
// kilobytes (receipt.MaxInputSize is the receipt package's bound).
const maxInput = receipt.MaxInputSize

// readFile reads an input file; its errors are unreadableError.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unreadable(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, unreadable(fmt.Errorf("%s: %w", path, err))
	}
	if len(data) > maxInput {
		return nil, unreadable(fmt.Errorf("%s: larger than %d bytes: not a receipt, key set, checkpoint or proof", path, maxInput))
	}
	return data, nil
}

// fetcher gets documents from a running service, only when the user asked
// for it with --server.
type fetcher struct {
	base   string
	client *http.Client
}

func newFetcher(server string) *fetcher {
	if server == "" {
		return nil
	}
	return &fetcher{base: strings.TrimRight(server, "/"), client: &http.Client{Timeout: 15 * time.Second}}
}

// get fetches a document; its errors are unreadableError.
func (f *fetcher) get(path string) ([]byte, error) {
	body, err := f.fetch(path)
	return body, unreadable(err)
}

func (f *fetcher) fetch(path string) ([]byte, error) {
	resp, err := f.client.Get(f.base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", f.base+path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", f.base+path, resp.Status)
	}
	if len(body) > maxInput {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", f.base+path, maxInput)
	}
	return body, nil
}

// isTerminal reports whether w is a terminal, where a progress line may be
// redrawn; redirected output gets none.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

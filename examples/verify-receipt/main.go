// Command verify-receipt is the auditor's tool: it verifies a fiscal402
// receipt offline and prints its verified claims, or exactly what failed.
//
// Usage:
//
//	verify-receipt -jwks jwks.json -log-key "$(cat log-key.txt)" receipt.json
//	verify-receipt -server https://fiscal.example receipt.json
//	verify-receipt -server https://fiscal.example rcpt_x402-…
//
// Offline, it needs only the receipt, the service's JWKS (every receipt key
// it ever used, with validity windows) and the log's note verifier key
// ("origin+hash+base64"). With -server it fetches the JWKS from
// /.well-known/jwks.json and the log key from /.well-known/log-key (unless
// given), and a receipt given by id from /v1/receipts/{id}. Auditors should
// archive the JWKS and the log key with the receipts they keep.
//
// It checks the Ed25519 JWS against a key valid at the receipt's issue time,
// that the readable claims equal the signed ones, and the receipt's inclusion
// in the signed checkpoint of the Merkle log (package receipt, Verify).
//
// Exit status: 0 verified, 1 not verified, 2 usage or I/O problem.
package main

import (
	"encoding/json"
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

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jwksPath := fs.String("jwks", "", "JWKS file (default: fetched from -server)")
	logKey := fs.String("log-key", "", "log note verifier key, origin+hash+base64 (default: fetched from -server)")
	logKeyFile := fs.String("log-key-file", "", "file holding the log note verifier key")
	server := fs.String("server", "", "base URL of a running fiscal402 service to fetch the JWKS, the log key and receipts from")
	quiet := fs.Bool("q", false, "print only the verdict, not the claims")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: verify-receipt [-jwks file | -server url] [-log-key key | -log-key-file file] receipt.json|receipt-id")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	src := &sources{server: strings.TrimRight(*server, "/"), client: &http.Client{Timeout: 15 * time.Second}}
	rcpt, err := src.receipt(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "verify-receipt:", err)
		return 2
	}
	// A sandbox receipt verifies against the sandbox's own keys, which
	// the server publishes under /sandbox; the production keys would (and
	// must) refuse it.
	jwksPath2, logKeyPath := "/.well-known/jwks.json", "/.well-known/log-key"
	if environmentOf(rcpt) == "sandbox" {
		jwksPath2, logKeyPath = "/sandbox/v1/jwks.json", "/sandbox/v1/log-key"
	}
	jwks, err := src.file(*jwksPath, jwksPath2, "-jwks")
	if err != nil {
		fmt.Fprintln(stderr, "verify-receipt:", err)
		return 2
	}
	key := *logKey
	if key == "" {
		raw, err := src.file(*logKeyFile, logKeyPath, "-log-key")
		if err != nil {
			fmt.Fprintln(stderr, "verify-receipt:", err)
			return 2
		}
		key = strings.TrimSpace(string(raw))
	}

	claims, err := receipt.Verify(rcpt, jwks, key)
	var ve *receipt.VerifyError
	if errors.As(err, &ve) {
		fmt.Fprintf(stdout, "NOT VERIFIED: step %q failed: %v\n", ve.Step, ve.Err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stdout, "NOT VERIFIED: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "VERIFIED: %s (%s, %s) signed by a key valid at %s, included at index %d of log %s\n",
		claims.ReceiptID, claims.Spec, claims.Environment, time.Unix(claims.IssuedAt, 0).UTC().Format(time.RFC3339), claims.Log.Index, claims.Log.Origin)
	if !*quiet {
		out, _ := json.MarshalIndent(claims, "", "  ")
		fmt.Fprintln(stdout, string(out))
	}
	return 0
}

// sandboxReceiptPrefix opens the id of every sandbox receipt (the
// service's sandbox ids are "x402-sandbox-" + 128 random bits).
const sandboxReceiptPrefix = "rcpt_x402-sandbox-"

// environmentOf reads the readable claims' environment of a receipt
// document ("" when it cannot): it only chooses which published keys to
// fetch; the verification itself checks the signed claims.
func environmentOf(doc []byte) string {
	var r struct {
		Claims struct {
			Environment string `json:"environment"`
		} `json:"claims"`
	}
	if json.Unmarshal(doc, &r) != nil {
		return ""
	}
	return r.Claims.Environment
}

type sources struct {
	server string
	client *http.Client
}

// receipt reads a receipt file, or fetches a receipt id from the server.
func (s *sources) receipt(arg string) ([]byte, error) {
	if strings.HasPrefix(arg, "rcpt_") {
		if _, err := os.Stat(arg); err != nil {
			if s.server == "" {
				return nil, fmt.Errorf("%s: no such file (give -server to fetch a receipt by id)", arg)
			}
			if strings.HasPrefix(arg, sandboxReceiptPrefix) {
				return s.get("/sandbox/v1/receipts/" + arg)
			}
			return s.get("/v1/receipts/" + arg)
		}
	}
	return os.ReadFile(arg)
}

// file reads path, or fetches the document from the server.
func (s *sources) file(path, serverPath, flagName string) ([]byte, error) {
	if path != "" {
		return os.ReadFile(path)
	}
	if s.server == "" {
		return nil, fmt.Errorf("give %s or -server", flagName)
	}
	return s.get(serverPath)
}

func (s *sources) get(path string) ([]byte, error) {
	resp, err := s.client.Get(s.server + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", s.server+path, resp.Status)
	}
	return body, nil
}

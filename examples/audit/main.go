// Command audit is the auditor's tool: it checks fiscal402 receipts,
// checkpoints and ledger files offline, from files, and says in words what
// they prove or which check failed.
//
//	audit receipt RECEIPT.json --jwks jwks.json --log-key-file log-key.txt [--openings openings.json]
//	audit consistency OLD-checkpoint NEW-checkpoint --log-key-file log-key.txt [--proof proof.json | --server URL]
//	audit ledger ledger.db --log-key-file log-key.txt [--jwks jwks.json]
//	audit return return.json --receipts DIR [--jwks jwks.json --log-key-file log-key.txt]
//
// An offline verification needs the receipt (GET /v1/receipts/{id}), the
// receipt key set (GET /.well-known/jwks.json) and the log's verifier key
// (GET /.well-known/log-key); sandbox receipts the sandbox's (GET
// /sandbox/v1/jwks.json, GET /sandbox/v1/log-key). Checking that the log
// only grew needs two checkpoints (GET /v1/log/checkpoint, or the end of
// a receipt's tlog_proof) and a consistency proof (GET
// /v1/log/proof/consistency). Auditors archive the key set and the log key
// with the receipts they keep. Recomputing an OSS return (GET
// /v1/returns/oss) needs the return and the receipts of the ledger indexes
// its lines list (and, for a correction, the receipt of the supply it
// corrects).
//
// Exit status: 0 all checks hold; 1 a check failed (the output names the
// first); 2 a usage problem (a flag or argument missing or wrong, or a key
// set or log key that is not one); 3 an input could not be read (a missing
// or unreadable file, a server that did not answer). The implementation is
// package examples/internal/audit; examples/verify-receipt is its former
// name.
package main

import (
	"os"

	"github.com/fiscal402/fiscal402/examples/internal/audit"
)

func main() { os.Exit(audit.Main(os.Args[1:], os.Stdout, os.Stderr)) }

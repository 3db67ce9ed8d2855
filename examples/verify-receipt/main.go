// Command verify-receipt is the former name of the auditor's command,
// examples/audit, kept so that existing scripts go on working: it is
// "audit receipt" with the same flags.
//
//	verify-receipt -jwks jwks.json -log-key "$(cat log-key.txt)" receipt.json
//	verify-receipt -server https://fiscal.example rcpt_x402-…
//
// Exit status: 0 verified, 1 not verified, 2 usage or I/O problem.
package main

import (
	"io"
	"os"

	"github.com/fiscal402/fiscal402/examples/internal/audit"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	return audit.VerifyReceipt(args, stdout, stderr)
}

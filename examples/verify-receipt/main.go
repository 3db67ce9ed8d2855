// Command verify-receipt is the former name of the auditor's command,
// examples/audit, kept so that existing scripts go on working: it is
// "audit receipt" with the same flags.
//
//	verify-receipt -jwks jwks.json -log-key "$(cat log-key.txt)" receipt.json
//	verify-receipt -server https://fiscal.example rcpt_x402-…
//
// Exit status, as audit's: 0 all checks hold; 1 a check failed (the output
// names the first); 2 a usage problem (a flag or argument missing or wrong,
// or a key set or log key that is not one); 3 an input could not be read (a
// missing or unreadable file, a server that did not answer).
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

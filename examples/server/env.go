package main

import (
	"flag"
	"fmt"
	"strings"
)

// Every flag of the server can also be given as an environment variable:
// FISCAL402_ and the flag's name in upper case with '-' as '_'
// (-rate-limit is FISCAL402_RATE_LIMIT). A flag on the command line wins
// over the variable. Containers and service managers configure this way,
// and secrets (RPC URLs with provider keys) stay out of the process list.
//
// Actions are not variables: a FISCAL402_ROTATE_RECEIPT_KEY left in an
// environment would rotate the receipt key at every start, and a
// FISCAL402_RECOVER would make every check (read only) replay and write the
// ledger file.
var envExcluded = map[string]bool{"rotate-receipt-key": true, "recover": true}

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "FISCAL402_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// applyEnv sets each flag of fs whose variable is set (and not empty) from
// it, before the command line is parsed, so that the command line wins.
// A value the flag refuses is an error naming the variable.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || envExcluded[f.Name] {
			return
		}
		name := envName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q (the -%s flag): %v", name, v, f.Name, e)
		}
	})
	return err
}

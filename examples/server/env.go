package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
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
//
// A variable the server and its commands do not read is refused
// (checkEnv): a misspelt name would otherwise be ignored while the
// operator believes it took effect.
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

// The variables of the operator's commands that are not the server's:
// backup's -server, -o; check's -ledger, -log-key (each command reads its
// flags' variables with applyEnv; TestCommandVariablesAreKnown holds this
// list to their flags).
var commandEnv = []string{"FISCAL402_SERVER", "FISCAL402_O", "FISCAL402_LEDGER", "FISCAL402_LOG_KEY"}

// The variables read directly rather than through a flag: secrets, which
// have no flag so that they stay out of the process list.
var directEnv = []string{"FISCAL402_DEMO_KEY", "FISCAL402_OPERATOR_KEY", "FISCAL402_DATABASE_URL", "FISCAL402_HMRC_CLIENT_SECRET"}

// toolEnv are the FISCAL402_ variables of this repository's tests,
// benchmarks and scripts (.ci/run sets FISCAL402_STRICT=1 for the whole
// test run, bench/ sets FISCAL402_BENCH_*; the server's own tests run it
// in that environment). They are not the server's, and it ignores them;
// TestRepositoryVariablesAreKnown finds every FISCAL402_ name the
// repository uses in this list or among the server's.
var toolEnv = []string{
	"FISCAL402_STRICT", "FISCAL402_SERVER_BIN", "FISCAL402_REPLICA_LOGS", "FISCAL402_REPLICA_KILLS",
	"FISCAL402_BENCH_SCALE", "FISCAL402_BENCH_RECORDS", "FISCAL402_BENCH_OPEN", "FISCAL402_BENCH_SERVER_CPUPROFILE",
	"FISCAL402_LEDGER_BENCH", "FISCAL402_LEDGER_PAGESIZE", "FISCAL402_LEDGER_CRASH_DIR", "FISCAL402_LEDGER_CRASH_ROUND",
	"FISCAL402_CHECK_FILE", "FISCAL402_ANVIL", "FISCAL402_NODE_MODULES", "FISCAL402_TEST_DATABASE_URL",
	"FISCAL402_KEEP_SCHEMAS", "FISCAL402_SCREENSHOTS", "FISCAL402_SUMMARY_UBL",
	"FISCAL402_FAULTFS_BACKING", "FISCAL402_FAULTFS_DISK", "FISCAL402_FAULTFS_MOUNT",
}

// serverEnv is every FISCAL402_ variable the server or one of its commands
// reads: the server's flags' (but the actions'), the commands' and the
// direct ones.
func serverEnv() map[string]bool {
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	serverFlags(fs, &o, &vf)
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		if !envExcluded[f.Name] {
			known[envName(f.Name)] = true
		}
	})
	for _, list := range [][]string{commandEnv, directEnv} {
		for _, name := range list {
			known[name] = true
		}
	}
	return known
}

// checkEnv refuses an environment that sets (not empty) a FISCAL402_
// variable neither the server nor its commands nor the repository's tools
// know: a misspelt name (FISCAL402_LISTNE) would be ignored, and the
// operator would believe the setting took effect. The error names each
// such variable and, where one is close, the known name it probably
// meant. The actions' names (FISCAL402_ROTATE_RECEIPT_KEY,
// FISCAL402_RECOVER) are refused too, with what to do instead: documented
// as having no variable, they would be ignored while the operator believes
// the key was rotated or the journal replayed (envExcluded).
func checkEnv(environ []string) error {
	known := serverEnv()
	tools := map[string]bool{}
	for _, name := range toolEnv {
		tools[name] = true
	}
	var unknown, actions []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "FISCAL402_") || value == "" || known[name] || tools[name] {
			continue
		}
		if flagName := envFlagName(name); envExcluded[flagName] {
			actions = append(actions, fmt.Sprintf("%s: -%s is an action, not a setting, and has no variable; nothing was done: give -%s on the command line, and unset the variable", name, flagName, flagName))
			continue
		}
		msg := name
		switch close := closeNames(name, known); len(close) {
		case 0:
		case 1:
			msg += " (did you mean " + close[0] + "?)"
		default:
			msg += " (did you mean one of " + strings.Join(close[:len(close)-1], ", ") + " or " + close[len(close)-1] + "?)"
		}
		unknown = append(unknown, msg)
	}
	var errs []error
	slices.Sort(actions)
	for _, a := range actions {
		errs = append(errs, errors.New(a))
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		errs = append(errs, fmt.Errorf("unknown environment variable %s: neither the server nor its commands read it, so its setting would be ignored; correct or unset it (the variables are in README \"Configuration\" and `server -h`)", strings.Join(unknown, ", ")))
	}
	return errors.Join(errs...)
}

// envFlagName is the flag name of a FISCAL402_ variable (the inverse of
// envName).
func envFlagName(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "FISCAL402_")), "_", "-")
}

// closeNames are the known names a misspelt one probably meant: those at
// the least edit distance (transpositions counting one), when it is at most
// 2 and at most a third of the known name (FISCAL402_LISTEN for
// FISCAL402_LISTNE); else those that one of the two extends by whole words
// (FISCAL402_DATA for FISCAL402_DATA_DIR); sorted.
func closeNames(name string, known map[string]bool) []string {
	word := strings.TrimPrefix(name, "FISCAL402_")
	best, out := 3, []string(nil)
	for k := range known {
		w := strings.TrimPrefix(k, "FISCAL402_")
		d := editDistance(word, w)
		switch {
		case 3*d > len(w):
		case d < best:
			best, out = d, []string{k}
		case d == best:
			out = append(out, k)
		}
	}
	if out == nil {
		for k := range known {
			w := strings.TrimPrefix(k, "FISCAL402_")
			if strings.HasPrefix(word, w+"_") || strings.HasPrefix(w, word+"_") {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and transpositions of adjacent
// bytes, each one).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// asksHelp tells whether args only ask for usage, which an environment
// with an unknown variable (checkEnv) must not refuse, since the refusal
// points to `server -h`: the server's flags parsed (dry) end in
// flag.ErrHelp, or a command (and its subcommand) is followed by nothing
// but -h. A "-h" that is a flag's value (-data -h) asks for nothing.
func asksHelp(args []string) bool {
	command := false
	for _, c := range operatorCommands {
		command = command || len(args) > 0 && c.name == args[0]
	}
	if command {
		rest := args[1:]
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			rest = rest[1:] // a subcommand: accounts create, vat-rates check
		}
		return len(rest) == 1 && slices.Contains([]string{"-h", "-help", "--h", "--help"}, rest[0])
	}
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	serverFlags(fs, &o, &vf)
	return errors.Is(fs.Parse(args), flag.ErrHelp)
}

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestUnknownVariableRefusesStart: a FISCAL402_ variable neither the server
// nor its commands read (a misspelt FISCAL402_LISTNE, FISCAL402_DATA_DIRR)
// was ignored: the server started on its defaults, and the operator
// believed the setting had taken effect. The real binary now refuses to
// start (exit code 1) naming the variable and the known name it probably
// meant, and makes nothing. The repository's tools' variables
// (FISCAL402_STRICT of .ci/run, FISCAL402_BENCH_*) are still accepted.
func TestUnknownVariableRefusesStart(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"FISCAL402_LISTNE=127.0.0.1:0", "FISCAL402_LISTEN"},
		{"FISCAL402_DATA_DIRR=/srv/fiscal402", "FISCAL402_DATA"},
		{"FISCAL402_WEBHOOKS_ALLOW_LOOPBAK=true", "FISCAL402_WEBHOOKS_ALLOW_LOOPBACK"},
		{"FISCAL402_RATELIMIT=5", "FISCAL402_RATE_LIMIT"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		out, errOut, exited, code := runUntilListening(t, data, []string{c.env})
		name, _, _ := strings.Cut(c.env, "=")
		if !exited || code != 1 {
			t.Errorf("%s: the server started (exited %v, code %d)\n%s%s", c.env, exited, code, out, errOut)
			continue
		}
		if !strings.Contains(errOut, name+" (did you mean "+c.want+"?)") {
			t.Errorf("%s: %q; want the variable named, and %s", c.env, errOut, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s: the refused start made %s", c.env, data)
		}
	}
	// An operator's command in the same environment: refused the same way.
	data := t.TempDir()
	if _, errOut, err := runCommand(t, []string{"FISCAL402_DATA_DIRR=" + data}, "check"); err == nil || !strings.Contains(errOut, "FISCAL402_DATA_DIRR (did you mean FISCAL402_DATA?)") {
		t.Errorf("check with FISCAL402_DATA_DIRR: %v\n%s", err, errOut)
	}
	// No close name: the variable alone.
	if _, errOut, exited, _ := runUntilListening(t, t.TempDir(), []string{"FISCAL402_COLOUR=blue"}); !exited || !strings.Contains(errOut, "FISCAL402_COLOUR:") {
		t.Errorf("FISCAL402_COLOUR: exited %v\n%s", exited, errOut)
	}

	// The tools' variables, and an empty one, do not stop the server.
	out, errOut, exited, _ := runUntilListening(t, t.TempDir(), []string{"FISCAL402_STRICT=1", "FISCAL402_BENCH_SCALE=1M", "FISCAL402_SERVER_BIN=/nonexistent", "FISCAL402_LISTNE="})
	if exited {
		t.Fatalf("start with the tools' variables: exited\n%s%s", out, errOut)
	}
}

// TestRepositoryVariablesAreKnown: every FISCAL402_ name the repository
// uses (its code, scripts, CI and documents) is one the server or its
// commands read, an action's, or one of the tools' (toolEnv): a test run
// under .ci/run's FISCAL402_STRICT=1, or a benchmark's variable, does not
// make the server refuse to start. A new variable of a test or a script
// goes into toolEnv.
func TestRepositoryVariablesAreKnown(t *testing.T) {
	root := testtool.RepoDir(t)
	known := serverEnv()
	for _, name := range toolEnv {
		if known[name] {
			t.Errorf("%s is in toolEnv but the server reads it", name)
		}
		known[name] = true
	}
	nameRE := regexp.MustCompile(`FISCAL402_[A-Z0-9_]*[A-Z0-9]`)
	seen := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, _ := filepath.Rel(root, path); rel == filepath.Join("examples", "server", "env.go") || rel == filepath.Join("examples", "server", "env_test.go") {
			return nil // their misspelt names are examples
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range nameRE.FindAll(raw, -1) {
			if _, ok := seen[string(m)]; !ok {
				seen[string(m)], _ = filepath.Rel(root, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range seen {
		if !known[name] && !envExcluded[envFlagName(name)] {
			t.Errorf("%s (used in %s) is neither a variable of the server nor in toolEnv: with it set the server refuses to start", name, file)
		}
	}
	if len(seen) < 20 {
		t.Fatalf("found only %d FISCAL402_ names under %s", len(seen), root)
	}
}

// TestCommandVariablesAreKnown: each flag of the operator's commands is
// read from its variable (applyEnv), so each of those variables is known
// to the check (commandEnv), and commandEnv holds no name no command has.
func TestCommandVariablesAreKnown(t *testing.T) {
	known := serverEnv()
	fromCommands := map[string]bool{}
	flagRE := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, cmd := range []string{"backup", "check", "migrate"} {
		var errOut bytes.Buffer
		_ = run([]string{cmd, "-h"}, &bytes.Buffer{}, &errOut)
		flags := flagRE.FindAllStringSubmatch(errOut.String(), -1)
		if len(flags) == 0 {
			t.Fatalf("%s -h lists no flags:\n%s", cmd, errOut.String())
		}
		for _, f := range flags {
			if envExcluded[f[1]] {
				continue
			}
			fromCommands[envName(f[1])] = true
			if !known[envName(f[1])] {
				t.Errorf("%s -%s: its variable %s is not known to checkEnv", cmd, f[1], envName(f[1]))
			}
		}
	}
	for _, name := range commandEnv {
		if !fromCommands[name] {
			t.Errorf("commandEnv has %s, the variable of no command's flag", name)
		}
	}
	if !slices.Contains(directEnv, "FISCAL402_DEMO_KEY") {
		t.Error("directEnv lost FISCAL402_DEMO_KEY")
	}
}

// TestHelpWithUnknownVariable: the refusal of an unknown variable sends the
// operator to `server -h` for the names, so -h itself must answer in that
// environment: it prints its usage (exit status 0) and warns about the
// variable, where it was refused like a start. The same for a command's -h.
func TestHelpWithUnknownVariable(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"accounts", "-h"}, {"accounts", "create", "-h"}, {"vat-rates", "-h"}, {"vat-rates", "check", "-h"}, {"check", "-h"}} {
		_, errOut, err := runCommand(t, []string{"FISCAL402_LISTNE=127.0.0.1:0"}, args...)
		if err != nil {
			t.Errorf("%v with FISCAL402_LISTNE set: %v\n%s", args, err, errOut)
			continue
		}
		if !strings.Contains(strings.ToLower(errOut), "usage") {
			t.Errorf("%v: no usage printed\n%s", args, errOut)
		}
		if !strings.Contains(errOut, "FISCAL402_LISTNE (did you mean FISCAL402_LISTEN?)") {
			t.Errorf("%v: the unknown variable is not named\n%s", args, errOut)
		}
	}
	// A flag's value that reads "-h" is no request for help: still refused.
	if _, errOut, err := runCommand(t, []string{"FISCAL402_LISTNE=127.0.0.1:0"}, "-data", "-h"); err == nil {
		t.Errorf("-data -h with FISCAL402_LISTNE set: started or succeeded\n%s", errOut)
	}
}

// TestCheckOfADirectory: check -ledger DIR names the mistake and the file
// meant; it read "bbolt page structure: no valid meta page", the words of a
// damaged file, which send an operator to restore a backup.
func TestCheckOfADirectory(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"check", "-ledger", dir}, {"check", "-recover", "-ledger", dir}} {
		_, errOut, err := runCommand(t, nil, args...)
		if err == nil || !strings.Contains(errOut, "is a directory") || !strings.Contains(errOut, filepath.Join(dir, "ledger.db")) || strings.Contains(errOut, "meta page") {
			t.Errorf("%v: %v\n%s", args, err, errOut)
		}
	}
}

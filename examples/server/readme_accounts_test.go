package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEAccountsCreateRuns runs the README's "accounts create" example as
// written (only its data directory is a temporary one): a reader who copies
// it must get the new account's key, not a refusal of the seller it names.
func TestREADMEAccountsCreateRuns(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	args := readmeCommand(t, string(raw), "accounts create")
	data := t.TempDir()
	for i := range args {
		if args[i] == "-data" && i+1 < len(args) {
			args[i+1] = data
		}
	}
	out, errOut, err := runCommand(t, nil, args...)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "sk_") {
		t.Fatalf("the README's %q: %v\nstdout %q\nstderr %s", strings.Join(args, " "), err, out, errOut)
	}
}

// readmeCommand is the arguments of the README's first "go run
// ./examples/server" command line containing marker (continued over lines
// ending in a backslash), without the "go run ./examples/server" itself, a
// surrounding $( ), or a trailing comment.
func readmeCommand(t *testing.T, readme, marker string) []string {
	t.Helper()
	lines := strings.Split(readme, "\n")
	for i, l := range lines {
		if !strings.Contains(l, marker) {
			continue
		}
		cmd := l
		for strings.HasSuffix(strings.TrimSpace(cmd), `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(strings.TrimSpace(cmd), `\`) + " " + lines[i]
		}
		const run = "go run ./examples/server "
		at := strings.Index(cmd, run)
		if at < 0 {
			continue
		}
		cmd = cmd[at+len(run):]
		if c := strings.Index(cmd, "#"); c >= 0 {
			cmd = cmd[:c]
		}
		cmd = strings.TrimSuffix(strings.TrimSpace(cmd), ")")
		return shellWords(t, cmd)
	}
	t.Fatalf("the README has no %q command", marker)
	return nil
}

// shellWords splits a command line as sh does for plain words and double- or
// single-quoted strings (no expansions).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

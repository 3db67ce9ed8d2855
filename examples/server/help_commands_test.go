package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpNamesTheCommands: "server -h" is where a new operator looks, and
// where the server's own refusal of an unknown argument sends them ("see
// -h"); it printed the server's flags only, so the operator commands
// (backup, check, accounts, migrate) could not be found from it. It names
// each command run dispatches, with a line saying what it does.
func TestHelpNamesTheCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-h"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "help") {
		t.Fatalf("-h: %v", err)
	}
	help := out.String() + errOut.String()
	for _, cmd := range operatorCommands {
		if !strings.Contains(help, "\n  "+cmd.name+" ") || !strings.Contains(help, cmd.what) {
			t.Errorf("server -h does not name the command %q (%s)", cmd.name, cmd.what)
		}
		// Each named command is one run dispatches: its -h is its usage.
		out.Reset()
		errOut.Reset()
		run([]string{cmd.name, "-h"}, &out, &errOut)
		if !strings.Contains(strings.ToLower(out.String()+errOut.String()), "usage") {
			t.Errorf("%s -h printed no usage", cmd.name)
		}
	}
	if len(operatorCommands) == 0 {
		t.Fatal("no operator commands")
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelpExitsZero: "-h" (and "-help") asks for the usage; the server and
// each of its commands print it and exit 0, as Go's commands do, and write
// nothing else: no "flag: help requested" error, no exit status 1 that a
// script or a service manager would read as a failure, and no file made.
// "accounts -h" is the accounts usage, not an unknown command "-h".
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"-help"}, {"--help"},
		{"backup", "-h"}, {"check", "-h"}, {"migrate", "-h"},
		{"accounts", "-h"}, {"accounts", "help"}, {"accounts", "list", "-h"}, {"accounts", "create", "-h"},
		{"accounts", "rotate-key", "-h"}, {"accounts", "drop-old-keys", "-h"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(serverBinary(t), args...)
		cmd.Dir = dir
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err != nil {
			t.Errorf("%q: %v\n%s%s", args, err, out.String(), errOut.String())
			continue
		}
		all := out.String() + errOut.String()
		if !strings.Contains(strings.ToLower(all), "usage") {
			t.Errorf("%q printed no usage:\n%s", args, all)
		}
		if strings.Contains(all, "help requested") || strings.Contains(all, "unknown command") {
			t.Errorf("%q printed an error for a help request:\n%s", args, all)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("%q made %d file(s) in the working directory, e.g. %s", args, len(entries), entries[0].Name())
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNegativeFlagsNamed: a negative limit or duration is refused at start
// with the one flag given and its value ("-rate-burst -5: ..."), not a
// list of flags one of which is wrong; -webhook-timeout, which took a
// negative value silently as its 10 s default, is refused like the
// others. Nothing is made in the data directory.
func TestNegativeFlagsNamed(t *testing.T) {
	for _, c := range [][2]string{
		{"-rate-limit", "-1"}, {"-rate-burst", "-5"}, {"-auth-fail-rate", "-0.5"}, {"-auth-fail-burst", "-2"},
		{"-auth-fail-max-backoff", "-1m"}, {"-retention", "-5h"}, {"-accounts-reload", "-1s"},
		{"-ready-fx-max-age", "-1h"}, {"-webhook-timeout", "-1s"},
	} {
		t.Run(c[0], func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			// A server that starts is stopped by the context, and fails.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, serverBinary(t), "-data", data, "-listen", "127.0.0.1:0", "-fx-refresh=false", c[0], c[1])
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			errOut := stderr.String()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("%s %s: the server started\n%s", c[0], c[1], errOut)
			}
			value := c[1] // as the refusal prints it: a duration in Go's form
			if d, err := time.ParseDuration(value); err == nil {
				value = d.String()
			}
			if !strings.Contains(errOut, c[0]+" "+value+":") {
				t.Errorf("the refusal does not name %s %s:\n%s", c[0], value, errOut)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the refused start made %s (%v)", data, err)
			}
		})
	}
}

package main

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/anviltest"
)

// TestRun runs the example against a local chain with USDC at the real Base
// address: an x402 payment settled with transferWithAuthorization, reported
// by the hook as a success and as "settlement_pending".
func TestRun(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)})
	for _, pending := range []bool{false, true} {
		tx, _ := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_190_000))
		args := []string{"-rpc", chain.RPCURL(), "-tx", tx, "-payer", chain.Payer(), "-payto", chain.PayTo(),
			"-amount", "1190000", "-country", "DE", "-wait", "20s"}
		if pending {
			args = append(args, "-pending")
		}
		var out, errs bytes.Buffer
		if err := run(args, &out, &errs); err != nil {
			t.Fatalf("pending=%v: %v\n%s%s", pending, err, out.String(), errs.String())
		}
		for _, want := range []string{"hook: queued x402-", ": PROCESSED, 1.19 USDC on eip155:8453", "(OSS_B2C DE 19%)", "on chain: block ", ", log 1, ", "verified offline"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("pending=%v: output lacks %q:\n%s", pending, want, out.String())
			}
		}
	}
}

// TestRunAgain: a second run on the same data directory finds the record
// instead of recording the payment twice.
func TestRunAgain(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)})
	tx, _ := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(500_000))
	args := []string{"-rpc", chain.RPCURL(), "-tx", tx, "-payer", chain.Payer(), "-payto", chain.PayTo(),
		"-amount", "500000", "-data", t.TempDir(), "-wait", "20s"}
	var first, second, errs bytes.Buffer
	if err := run(args, &first, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	if err := run(args, &second, &errs); err != nil {
		t.Fatalf("second run: %v\n%s", err, errs.String())
	}
	recorded := func(out string) string { return out[strings.Index(out, "recorded "):] }
	if recorded(first.String()) != recorded(second.String()) {
		t.Fatalf("runs differ:\n%s\n%s", first.String(), second.String())
	}
}

func TestRunNeedsFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if err := run([]string{"-rpc", "http://127.0.0.1:1"}, &out, &errs); err == nil || !strings.Contains(err.Error(), "is required") {
		t.Fatalf("error %v", err)
	}
}

// TestHelpIsNotAnError: -h (and -help) prints the flags and ends the run
// without an error, as audit, verify-receipt, soak and the server's -h do.
// It printed the flags and then "x402hook: flag: help requested" and
// exited 1, a failure to a script and a puzzle to a user asking for help.
func TestHelpIsNotAnError(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out, errs bytes.Buffer
		if err := run([]string{arg}, &out, &errs); err != nil {
			t.Errorf("run(%s) = %v, want nil", arg, err)
		}
		if !strings.Contains(errs.String(), "-rpc") {
			t.Errorf("run(%s) did not list the flags: %q", arg, errs.String())
		}
	}
}

// Command genrates writes package vat's rate table (rates_table.go) from the
// ibericode/vat-rates snapshot and vat/ratedata/corrections.json. It is run
// by go generate in the vat directory; see package ratesgen for the format.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fiscal402/fiscal402/vat/internal/ratesgen"
)

func main() {
	base := flag.String("base", "ratedata/ibericode/vat-rates.json", "ibericode vat-rates.json")
	corr := flag.String("corrections", "ratedata/corrections.json", "corrections file")
	out := flag.String("out", "rates_table.go", "output Go file")
	flag.Parse()
	if err := run(*base, *corr, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genrates:", err)
		os.Exit(1)
	}
}

func run(basePath, corrPath, outPath string) error {
	base, err := os.ReadFile(basePath)
	if err != nil {
		return err
	}
	corr, err := os.ReadFile(corrPath)
	if err != nil {
		return err
	}
	src, err := ratesgen.Generate(
		ratesgen.Input{Name: ratesgen.BaseName, Data: base},
		ratesgen.Input{Name: ratesgen.CorrectionsName, Data: corr},
	)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, src, 0o644)
}

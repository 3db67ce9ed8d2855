// Command faultfsd serves a faultfs mount (package faultfs) for a test
// process: faultfsd BACKING MOUNTPOINT, commands on stdin, answers on
// stdout; it unmounts and exits when stdin ends (its test process ended,
// however it ended). Tests start it through faultfs.Mount.
package main

import (
	"fmt"
	"os"

	"github.com/fiscal402/fiscal402/internal/faultfs"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: faultfsd BACKING MOUNTPOINT")
		os.Exit(2)
	}
	if err := faultfs.Serve(os.Args[1], os.Args[2], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "faultfsd:", err)
		os.Exit(1)
	}
}

// Package goblbench measures fiscal402 beside a peer library for the same
// work, GOBL (github.com/invopop/gobl with github.com/invopop/gobl.ubl): one
// sale made into a signed invoice and its UBL XML, per document, in one
// `go test -bench` run. It is a module of its own so that the main module
// never depends on GOBL; see README.md for what each row measures.
package goblbench

// Package fiscal turns settled stablecoin payments into EU VAT fiscal records:
// it composes vat, fx, ubl, ledger, receipt, vies and evmverify behind one
// Engine, and owns the error codes.
package fiscal

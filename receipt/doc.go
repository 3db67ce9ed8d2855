// Package receipt signs fiscal receipts and verifies them offline, including
// their proof of inclusion in the ledger's Merkle log.
package receipt

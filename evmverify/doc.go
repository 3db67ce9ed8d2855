// Package evmverify proves on chain that a claimed USDC transfer happened, by
// reading the transaction receipt, its Transfer log and its block over JSON-RPC.
package evmverify

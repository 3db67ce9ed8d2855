// Package fakechain is the one in-process Ethereum JSON-RPC node of the
// tests: a programmable Base node (chain id 8453) serving the calls a
// verification makes (eth_chainId, eth_blockNumber, eth_syncing,
// eth_getTransactionReceipt, eth_getTransactionByHash, eth_getBlockByNumber
// with numbers and the latest, safe and finalized tags), holding mined USDC
// Transfer and EIP-3009 AuthorizationUsed logs, counting the calls per
// method, and producing on demand what a real node will not: JSON-RPC
// errors, syncing, hangs, reorganised or inconsistent answers, garbage.
// A real EVM with Circle's USDC is internal/anviltest's; this node serves
// where anvil is not installed or cannot misbehave on demand.
//
// It imports none of the module's packages, so that the internal tests of
// evmverify (a leaf) can use it: topics, addresses and hashes are plain
// strings, typed here independently of the code under test.
package fakechain

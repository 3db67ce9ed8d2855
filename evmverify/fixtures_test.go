package evmverify

import (
	"time"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// The fake node (internal/fakechain) is programmed for the failure modes a
// real node will not produce on demand (garbage, error objects, timeouts,
// reorg races). The happy paths are tested against anvil (anvil_test.go).

// Test fixtures: addresses and hashes that are not derived from the code
// under test.
const (
	fxPayer       = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	fxPayTo       = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
	fxFacilitator = fakechain.Sender // the sender of every mined transaction
	fxOther       = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc"
	fxUSDCBase    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" // mixed case on purpose
	fxTx          = "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344"
	fxBlockTime   = 1767225600 // 2026-01-01T00:00:00Z
)

// newFakeNode is a Base node whose block n is dated fxBlockTime + 2n s.
func newFakeNode() *fakechain.Node { return fakechain.New(time.Unix(fxBlockTime, 0)) }

// authUsedLog is the EIP-3009 AuthorizationUsed log of an x402 payment.
func authUsedLog(index uint64, token, authorizer string) map[string]any {
	return fakechain.AuthorizationUsedLog(index, token, authorizer, fakechain.Hash("nonce"))
}

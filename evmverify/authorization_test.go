package evmverify

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// A claim with an EIP-3009 nonce is backed by the asset's
// AuthorizationUsed(payer, nonce) event and the Transfer that follows it
// (EIP-3009, https://eips.ethereum.org/EIPS/eip-3009; x402 exact on EVM,
// https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md).
func TestVerifyAuthorizationNonce(t *testing.T) {
	impostor := "0x1111111111111111111111111111111111111111"
	nA, nB := fakechain.Hash("nonce A"), fakechain.Hash("nonce B")
	idx := func(i uint64) *uint64 { return &i }
	cases := []struct {
		name   string
		logs   []map[string]any
		claim  func(c *Claim)
		reason string // "" = verified
		index  uint64 // the matched log when verified
	}{
		{"its own nonce", []map[string]any{
			fakechain.AuthorizationUsedLog(4, fxUSDCBase, fxPayer, nA),
			fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, "", 5},
		{"nonce in upper case", []map[string]any{
			fakechain.AuthorizationUsedLog(4, fxUSDCBase, fxPayer, nA),
			fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, func(c *Claim) { c.Nonce = "0x" + strings.ToUpper(nA[2:]) }, "", 5},
		{"another nonce", []map[string]any{
			fakechain.AuthorizationUsedLog(4, fxUSDCBase, fxPayer, nB),
			fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, ReasonAuthorizationMismatch, 0},
		{"no authorization used", []map[string]any{
			fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, ReasonAuthorizationMismatch, 0},
		{"nonce used by the impostor token", []map[string]any{
			fakechain.AuthorizationUsedLog(0, impostor, fxPayer, nA),
			fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, ReasonAuthorizationMismatch, 0},
		{"no transfer after the authorization", []map[string]any{
			fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
			fakechain.AuthorizationUsedLog(1, fxUSDCBase, fxPayer, nA),
		}, nil, ReasonAuthorizationMismatch, 0},
		{"the authorization's transfer is for another amount", []map[string]any{
			fakechain.AuthorizationUsedLog(0, fxUSDCBase, fxPayer, nA),
			fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_000_000),
			fakechain.TransferLog(2, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, ReasonAmountMismatch, 0},
		{"batch: the second authorization", []map[string]any{
			fakechain.AuthorizationUsedLog(0, fxUSDCBase, fxPayer, nB),
			fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
			fakechain.AuthorizationUsedLog(2, fxUSDCBase, fxPayer, nA),
			fakechain.TransferLog(3, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, nil, "", 3},
		{"pinned log of the other authorization", []map[string]any{
			fakechain.AuthorizationUsedLog(0, fxUSDCBase, fxPayer, nB),
			fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
			fakechain.AuthorizationUsedLog(2, fxUSDCBase, fxPayer, nA),
			fakechain.TransferLog(3, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		}, func(c *Claim) { c.LogIndex = idx(1) }, ReasonAuthorizationMismatch, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node := newFakeNode()
			tx := fakechain.Hash("tx " + c.name)
			node.Mine(tx, uint64(10+i), "0x1", c.logs...)
			node.Advance(1)
			v := verifier(t, Policy{}, node.Serve(t))
			claim := okClaim(1_500_000)
			claim.TxHash, claim.Nonce = tx, nA
			if c.claim != nil {
				c.claim(&claim)
			}
			f, err := v.Verify(context.Background(), claim)
			if c.reason != "" {
				rejected(t, err, c.reason)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.LogIndex != c.index {
				t.Errorf("matched log %d, want %d", f.LogIndex, c.index)
			}
		})
	}

	t.Run("malformed nonce", func(t *testing.T) {
		v := verifier(t, Policy{}, "http://127.0.0.1:1")
		claim := okClaim(1_500_000)
		claim.Nonce = "0x1234"
		_, err := v.Verify(context.Background(), claim)
		var ce *ClaimError
		if !errors.As(err, &ce) || ce.Field != "Nonce" {
			t.Fatalf("error %v, want ClaimError Nonce", err)
		}
	})
}

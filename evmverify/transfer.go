package evmverify

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// TransferTopic is topic0 of the ERC-20 event Transfer(address indexed
// from, address indexed to, uint256 value): Keccak-256 of its signature
// (EIP-20, https://eips.ethereum.org/EIPS/eip-20; Keccak-256 of
// "Transfer(address,address,uint256)"). The anviltest harness re-derives it
// on the node with web3_sha3.
const TransferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// AuthorizationUsedTopic is topic0 of the EIP-3009 event
// AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce):
// Keccak-256 of "AuthorizationUsed(address,bytes32)" (EIP-3009,
// https://eips.ethereum.org/EIPS/eip-3009; the anviltest harness re-derives
// it on the node with web3_sha3). Circle's FiatToken emits it from
// transferWithAuthorization and receiveWithAuthorization when it marks the
// authorization used, just before the Transfer it authorizes
// (EIP3009._transferWithAuthorization: _markAuthorizationAsUsed, then
// _transfer; https://github.com/circlefin/stablecoin-evm). An x402 exact
// payment by EIP-3009 is settled by that call with the payload's
// authorization (https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md,
// Phase 3), so the event names the nonce the transaction really used.
const AuthorizationUsedTopic = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"

// transfer is a decoded ERC-20 Transfer log.
type transfer struct {
	index    uint64
	token    string // emitting contract
	from, to string
	value    *big.Int
}

// decodeTransfer reads an ERC-20 Transfer event from a log. ERC-721 uses
// the same topic0 with the token id as a fourth, indexed topic and empty
// data; requiring exactly three topics and 32 bytes of data keeps NFTs out.
func decodeTransfer(l Log) (transfer, bool) {
	if len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32 {
		return transfer{}, false
	}
	from, ok1 := topicAddress(l.Topics[1])
	to, ok2 := topicAddress(l.Topics[2])
	if !ok1 || !ok2 {
		return transfer{}, false
	}
	return transfer{
		index: l.Index,
		token: l.Address,
		from:  from,
		to:    to,
		value: new(big.Int).SetBytes(l.Data),
	}, true
}

// want is what a verification looks for in a receipt: always the asset,
// and for a claim (Verify) also payer, receiver and amount. All addresses
// are lower case.
type want struct {
	asset    string
	claim    bool
	payer    string
	receiver string
	amount   *big.Int
	logIndex *uint64
	nonce    string    // the claim's EIP-3009 nonce, lower case; "": not checked
	time     time.Time // the claim's Time; zero: not checked
}

// mismatch is a set of claim fields a Transfer log disagrees with.
type mismatch uint8

const (
	misAmount mismatch = 1 << iota
	misReceiver
	misPayer
	misAsset
)

// diagnosisOrder ranks the single-field mismatches when several logs come
// close: a wrong amount or receiver is the usual fault of a claim (a price
// or payTo typo), a wrong asset the rarest.
var diagnosisOrder = [...]struct {
	m      mismatch
	reason string
}{
	{misAmount, ReasonAmountMismatch},
	{misReceiver, ReasonReceiverMismatch},
	{misPayer, ReasonPayerMismatch},
	{misAsset, ReasonAssetMismatch},
}

func (w *want) compare(t transfer) mismatch {
	var m mismatch
	if t.token != w.asset {
		m |= misAsset
	}
	if !w.claim {
		return m
	}
	if t.from != w.payer {
		m |= misPayer
	}
	if t.to != w.receiver {
		m |= misReceiver
	}
	if t.value.Cmp(w.amount) != 0 {
		m |= misAmount
	}
	return m
}

// explain renders the disagreement of one log with the claim for
// RejectedError.Detail.
func (w *want) explain(reason string, t transfer) string {
	switch reason {
	case ReasonAmountMismatch:
		return fmt.Sprintf("log %d transfers %s, claim says %s", t.index, t.value, w.amount)
	case ReasonReceiverMismatch:
		return fmt.Sprintf("log %d transfers to %s, claim says %s", t.index, t.to, w.receiver)
	case ReasonPayerMismatch:
		return fmt.Sprintf("log %d transfers from %s, claim says %s", t.index, t.from, w.payer)
	default:
		return fmt.Sprintf("log %d is emitted by %s, claim says %s", t.index, t.token, w.asset)
	}
}

// match finds the one Transfer log that backs the claim (address == asset,
// topic0 == Transfer, topic1 == payer, topic2 == receiver, data == amount:
// the EIP-20 event, https://eips.ethereum.org/EIPS/eip-20, emitted by the
// token whatever contract sent the transaction) or says precisely why there is none.
func (w *want) match(logs []Log) (transfer, *RejectedError) {
	if w.nonce != "" {
		return w.matchAuthorization(logs)
	}
	return w.matchTransfer(logs)
}

// matchTransfer is match without an authorization nonce.
func (w *want) matchTransfer(logs []Log) (transfer, *RejectedError) {
	if w.logIndex != nil {
		return w.matchAt(logs, *w.logIndex)
	}
	var hits []transfer
	var near [len(diagnosisOrder)]*transfer
	transfers := 0
	for _, l := range logs {
		t, ok := decodeTransfer(l)
		if !ok {
			continue
		}
		transfers++
		m := w.compare(t)
		if m == 0 {
			hits = append(hits, t)
			continue
		}
		for i, d := range diagnosisOrder {
			if m == d.m && near[i] == nil {
				near[i] = &t
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
	default:
		idx := make([]string, len(hits))
		for i, h := range hits {
			idx[i] = fmt.Sprint(h.index)
		}
		return transfer{}, reject(ReasonAmbiguousLogs,
			"logs %s all match the claim; give the log index", strings.Join(idx, ", "))
	}
	for i, d := range diagnosisOrder {
		if near[i] != nil {
			return transfer{}, reject(d.reason, "%s", w.explain(d.reason, *near[i]))
		}
	}
	return transfer{}, reject(ReasonNoMatchingLog,
		"receipt has %d logs, %d of them ERC-20 Transfers; none of asset %s matches the claim",
		len(logs), transfers, w.asset)
}

// matchAt checks the log at one index (a claim that names its log, or
// ReadTransfer).
func (w *want) matchAt(logs []Log, index uint64) (transfer, *RejectedError) {
	for _, l := range logs {
		if l.Index != index {
			continue
		}
		t, ok := decodeTransfer(l)
		if !ok {
			return transfer{}, reject(ReasonLogNotTransfer,
				"log %d is not an ERC-20 Transfer(address,address,uint256) event", index)
		}
		m := w.compare(t)
		if m == 0 {
			return t, nil
		}
		// With a pinned log a foreign token makes every other comparison
		// meaningless, so the asset is reported first; otherwise the first
		// disagreement in diagnosisOrder names the reason and the detail
		// lists them all.
		reason := ReasonAssetMismatch
		if m&misAsset == 0 {
			for _, d := range diagnosisOrder {
				if m&d.m != 0 {
					reason = d.reason
					break
				}
			}
		}
		var details []string
		for _, d := range diagnosisOrder {
			if m&d.m != 0 {
				details = append(details, w.explain(d.reason, t))
			}
		}
		return transfer{}, reject(reason, "%s", strings.Join(details, "; "))
	}
	return transfer{}, reject(ReasonNoMatchingLog, "receipt has no log with index %d", index)
}

// matchAuthorization finds the Transfer an EIP-3009 authorization made: the
// asset's AuthorizationUsed(payer, nonce) log, then the asset's first ERC-20
// Transfer log after it, which must match the claim (and be the claim's
// LogIndex when it names one). A receipt without that event did not use
// the claimed authorization (another nonce, another authorizer, or no
// transferWithAuthorization at all): ReasonAuthorizationMismatch. Among
// several Transfers of the same parties and amount (a batch) the
// authorization picks its own.
func (w *want) matchAuthorization(logs []Log) (transfer, *RejectedError) {
	var used []string // nonces the payer's authorizations of the asset used
	for _, l := range logs {
		if l.Address != w.asset || len(l.Topics) != 3 || l.Topics[0] != AuthorizationUsedTopic {
			continue
		}
		if a, ok := topicAddress(l.Topics[1]); !ok || a != w.payer {
			continue
		}
		if l.Topics[2] != w.nonce {
			used = append(used, l.Topics[2])
			continue
		}
		var next *uint64 // the asset's first Transfer log after l
		for _, t := range logs {
			if _, ok := decodeTransfer(t); ok && t.Address == w.asset && t.Index > l.Index && (next == nil || t.Index < *next) {
				next = &t.Index
			}
		}
		if next != nil {
			if w.logIndex != nil && *w.logIndex != *next {
				return transfer{}, reject(ReasonAuthorizationMismatch,
					"the Transfer of authorization nonce %s is log %d, claim says log %d", w.nonce, *next, *w.logIndex)
			}
			return w.matchAt(logs, *next)
		}
		return transfer{}, reject(ReasonAuthorizationMismatch,
			"log %d marks authorization nonce %s used, but no Transfer of asset %s follows it", l.Index, w.nonce, w.asset)
	}
	// The claimed authorization was not used. When the Transfer itself
	// contradicts the claim (amount, payee, payer, asset), that is the
	// nearer fault and is named as without a nonce.
	if _, rej := w.matchTransfer(logs); rej != nil && rej.Reason != ReasonAmbiguousLogs {
		return transfer{}, rej
	}
	if len(used) > 0 {
		return transfer{}, reject(ReasonAuthorizationMismatch,
			"the transaction used authorization nonce %s of %s, claim says %s", strings.Join(used, ", "), w.payer, w.nonce)
	}
	return transfer{}, reject(ReasonAuthorizationMismatch,
		"no AuthorizationUsed(%s, %s) event of asset %s: the transaction did not use this EIP-3009 authorization", w.payer, w.nonce, w.asset)
}

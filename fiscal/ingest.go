package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/ledger"
)

// BuyerFacts are what the merchant attests about the buyer and the supply
// of a payment whose other facts come from x402 documents or from the chain
// (IngestX402, IngestTransfer). They are the merchant-attested fields of
// POST /settlements (spec §2.1) under the same JSON names and validated by
// the same rules; every field is optional. Without Country the record is
// PENDING_MANUAL_REVIEW (buyer_country_missing), never 0 % VAT.
type BuyerFacts struct {
	Country     string `json:"consumerCountry,omitempty"`    // ISO 3166-1 alpha-2 (EL, XI accepted)
	VATNumber   string `json:"consumerVatNumber,omitempty"`  // with its country prefix; checked with the registry
	Name        string `json:"consumerName,omitempty"`       // at most 200 characters
	PostalCode  string `json:"consumerPostalCode,omitempty"` // special territories (Canary Islands, Åland, ...)
	SupplyKind  string `json:"supplyKind,omitempty"`         // "" = the account's default, else "digital_service"
	Description string `json:"description,omitempty"`        // the invoice line's item name; "" = the account's
}

// normalised validates the facts and returns them in their stored form.
// Field pointers are /buyer/<JSON name>.
func (b BuyerFacts) normalised() (BuyerFacts, error) {
	parsed, err := parseBuyer(SettlementRequest{
		ConsumerCountry: b.Country, ConsumerVATNumber: b.VATNumber, ConsumerName: b.Name, ConsumerPostalCode: b.PostalCode,
	})
	if err != nil {
		return BuyerFacts{}, prefixField("/buyer", err)
	}
	n := BuyerFacts{Country: parsed.Country, VATNumber: parsed.VATNumber, Name: parsed.Name, PostalCode: parsed.PostalCode}
	if n.SupplyKind, err = parseToken("/buyer/supplyKind", b.SupplyKind); err != nil {
		return BuyerFacts{}, err
	}
	if n.Description, err = parseText("/buyer/description", b.Description); err != nil {
		return BuyerFacts{}, err
	}
	return n, nil
}

// RecordX402 is what the x402 documents said beyond the settlement itself,
// kept on x402-ingested records for reconciliation (research x402-evm.md
// §6.8). It is not part of the signed receipt, whose format is frozen.
type RecordX402 struct {
	Version        int    `json:"x402Version"`
	ResourceURL    string `json:"resourceUrl,omitempty"`
	TransferMethod string `json:"transferMethod,omitempty"`     // eip3009 | permit2 | erc7710, from the payload's shape
	Nonce          string `json:"authorizationNonce,omitempty"` // the EIP-3009 nonce (bytes32), when the payload has one
}

// IngestResult is the answer of IngestX402, EnqueueX402 and IngestTransfer.
type IngestResult struct {
	Outcome Outcome
	Record  *Record       // Created, Replayed, Existing
	JSON    []byte        // the record exactly as stored (Created, Replayed, Existing)
	Queued  *IngestStatus // Queued: the durable queue entry
}

// claimPaymentLog is the claim space of the transfer log that backs a
// record: (network, tx hash, log index). One log backs at most one record
// (issue 7; DESIGN.md "Chain verification").
const claimPaymentLog = "payment-log"

func logClaim(accountID, network, txHash string, logIndex uint64) ledger.Claim {
	return ledger.Claim{Space: claimPaymentLog, Key: network + ":" + txHash + ":" + strconv.FormatUint(logIndex, 10), Fingerprint: []byte(accountID)}
}

// withLogClaim adds the log claim of a settlement whose log index is known
// (it was read from or verified on chain), unless claims has it already.
func withLogClaim(claims []ledger.Claim, accountID string, p RecordPayment) []ledger.Claim {
	if p.LogIndex == nil || *p.LogIndex < 0 {
		return claims
	}
	c := logClaim(accountID, p.Network, p.TxHash, uint64(*p.LogIndex))
	for _, have := range claims {
		if have.Space == c.Space && have.Key == c.Key {
			return claims
		}
	}
	return append(claims, c)
}

// ingestJob is one payment to ingest from the chain: where to read it,
// who attests what about the buyer, and how to answer duplicates.
type ingestJob struct {
	acc         *Account
	idemKey     string
	fingerprint []byte // of the normalised input, for the Idempotency-Key claim
	network     string
	txHash      string
	txField     string  // JSON pointer of the tx hash in the caller's input
	logIndex    *uint64 // known before reading the chain (evm-transfer)
	buyer       BuyerFacts
	protocol    string
	scheme      string
	x402        *RecordX402
	read        func(ctx context.Context) (evmverify.Facts, error)
	puts        []ledger.Put // written with the record (the queue entry's final state)
}

// claims are the unique keys the record takes, in the order they are
// checked: Idempotency-Key, payment (network, tx hash), and the transfer
// log when its index is known.
func (j *ingestJob) claims() []ledger.Claim {
	var claims []ledger.Claim
	if j.idemKey != "" {
		claims = append(claims, ledger.Claim{Space: claimIdempotency, Key: j.acc.ID + "\x00" + j.idemKey, Fingerprint: j.fingerprint})
	}
	claims = append(claims, ledger.Claim{Space: claimPayment, Key: j.network + ":" + j.txHash, Fingerprint: []byte(j.acc.ID)})
	if j.logIndex != nil {
		claims = append(claims, logClaim(j.acc.ID, j.network, j.txHash, *j.logIndex))
	}
	return claims
}

// requireChain refuses an ingest path that needs the chain on a network
// whose chain mode is not "required": x402 documents carry no settlement
// time (research x402-evm.md §1.4) and are claims, not proof (§6.2), and
// evm-transfer reads the payment from the chain; neither has facts to
// record without it.
func (e *Engine) requireChain(network, field, path string) error {
	if e.chain != nil && e.chain.Mode(network) == evmverify.ModeRequired {
		return nil
	}
	return &Error{Code: CodeChainVerifyRequired, Field: field, Detail: fmt.Sprintf(
		"%s ingest takes the payment's facts and time from the chain, but chain verification is off for %s on this server; configure an RPC endpoint with mode required, or use POST /settlements with merchant-attested facts", path, network)}
}

// ingestNow answers from the ledger when the payment is already recorded,
// else reads the payment from the chain and records it, in one append with
// the job's extra writes. Chain errors map as in Settle: a chain that says
// no is CHAIN_VERIFY_FAILED (422), one that cannot answer or is not final
// yet is CHAIN_UNAVAILABLE (503, Retry-After), and nothing is written.
func (e *Engine) ingestNow(ctx context.Context, j *ingestJob) (*IngestResult, error) {
	claims := j.claims()
	res, err := e.answerFromLedger(j.acc.ID, claims)
	if err != nil {
		return nil, err
	}
	if res != nil {
		if li := res.Record.Settlement.LogIndex; j.logIndex != nil && li != nil && *li != int64(*j.logIndex) {
			// One record per transaction: the transaction's record was
			// made from another of its logs, so this log's transfer is not
			// the payment recorded.
			return nil, &Error{Code: CodeSettlementConflict, Field: "/logIndex", Detail: fmt.Sprintf(
				"this transaction is already recorded (%s) from its log %d; a transaction backs one record", res.Record.ID, *li)}
		}
		return ingestResult(res), nil
	}
	if err := e.checkQueuedKey(j); err != nil {
		return nil, err
	}
	// Checked again here for queue entries: the engine may have been
	// restarted with the network's chain mode off since they were queued.
	if err := e.requireChain(j.network, j.txField, j.protocol); err != nil {
		return nil, err
	}
	facts, err := j.read(ctx)
	if err != nil {
		err = chainError(err)
		if fe, ok := err.(*Error); ok && fe.Code == CodeChainVerifyFailed {
			return nil, withField(j.txField, fe)
		}
		return nil, err
	}
	now := e.clock().UTC()
	s, err := j.settlement(facts, now)
	if err != nil {
		return nil, err
	}
	if s.SupplyKind == "" {
		s.SupplyKind = j.acc.Seller.SupplyKind
	}
	if s.Description == "" {
		s.Description = j.acc.Seller.ItemName
	}
	p, err := e.prepare(ctx, j.acc, s, now)
	if err != nil {
		return nil, err
	}
	p.record.X402 = j.x402
	p.puts = append(p.puts, j.puts...)
	sr, err := e.append(ctx, withLogClaim(claims, j.acc.ID, p.record.Settlement), p)
	if err != nil {
		return nil, err
	}
	return ingestResult(sr), nil
}

func ingestResult(sr *SettleResult) *IngestResult {
	return &IngestResult{Outcome: sr.Outcome, Record: sr.Record, JSON: sr.JSON}
}

// settlement builds the settlement from the chain's facts and the
// merchant's buyer facts, through the same validation as POST /settlements:
// amount, payer, receiver and time are the Transfer log's and its block's.
func (j *ingestJob) settlement(f evmverify.Facts, now time.Time) (settlement, error) {
	amount, ok := new(big.Int).SetString(f.Amount, 10)
	if !ok {
		return settlement{}, &Error{Code: CodeInternal, Detail: "the chain facts carry an unreadable amount", Err: fmt.Errorf("amount %q", f.Amount)}
	}
	if amount.Sign() <= 0 {
		return settlement{}, badRequest("/logIndex", "the Transfer at log %d moves 0 USDC: it is not a payment", f.LogIndex)
	}
	req := SettlementRequest{
		AmountUSDC:         atomicToUSDC(amount),
		TxHash:             j.txHash,
		Timestamp:          f.BlockTime.UTC().Format(time.RFC3339),
		PayerWallet:        f.From,
		ReceiverWallet:     f.To,
		Network:            j.network,
		Asset:              AssetUSDC,
		ConsumerCountry:    j.buyer.Country,
		ConsumerVATNumber:  j.buyer.VATNumber,
		ConsumerName:       j.buyer.Name,
		ConsumerPostalCode: j.buyer.PostalCode,
		SupplyKind:         j.buyer.SupplyKind,
		Description:        j.buyer.Description,
	}
	s, err := req.validate(now)
	if err != nil {
		return settlement{}, err
	}
	s.Protocol, s.Scheme = j.protocol, j.scheme
	s.Facts = &f
	return s, nil
}

// fingerprintOf hashes the normalised input of an ingest, for the
// Idempotency-Key claim and the queue: the same payment reported again with
// the same buyer facts is the same request, whatever its spelling.
func fingerprintOf(kind string, input any, buyer BuyerFacts) []byte {
	b, _ := json.Marshal(struct {
		Kind  string     `json:"kind"`
		Input any        `json:"input"`
		Buyer BuyerFacts `json:"buyer"`
	}{kind, input, buyer})
	h := sha256.Sum256(b)
	return h[:]
}

// IngestX402 records an x402 payment from the documents an x402 resource
// server or facilitator holds after settling: the SettleResponse
// (PAYMENT-RESPONSE), the PaymentRequirements the payment was made against,
// and the PaymentPayload (PAYMENT-SIGNATURE). Each is raw JSON as the x402
// Go SDK hands it to its OnAfterSettle hooks (SettleResultContext.Result
// marshalled, RequirementsBytes, PayloadBytes), or the base64 header value.
// paymentRequirements may be empty when the payload is x402 v2 (its
// "accepted" member is the requirements); paymentPayload may be empty when
// the settle response names the payer. buyer carries the merchant-attested
// facts x402 does not have. The idempotency key is optional ("" for none).
//
// The payment is read from the documents (x402 v2, and the v1 names
// maxAmountRequired and "base"/"ethereum"): scheme exact only
// (UNSUPPORTED_SCHEME), a supported network (UNSUPPORTED_NETWORK), the
// network's USDC contract as asset (UNSUPPORTED_ASSET), the amount from the
// settle response when it has one, else from the requirements (atomic
// units, converted with math/big at 6 decimals). The documents are claims:
// the payment is then verified on chain (the network's chain mode must be
// "required", else CHAIN_VERIFICATION_REQUIRED), and the record's time is
// the block's timestamp, because x402 carries none.
//
// Answers:
//   - success:false is NOT_SETTLED (422) and nothing is written, except
//   - success:false with errorReason "settlement_pending" and a transaction
//     hash: the payment is held in the durable ingest queue (Outcome
//     Queued, see EnqueueX402), to be recorded once the chain has it;
//   - a recorded payment answers Created, or Existing / Replayed as Settle
//     does (one record per (network, tx hash) and per transfer log, across
//     all accounts);
//   - a chain that contradicts the documents is CHAIN_VERIFY_FAILED (422);
//     a chain that cannot be asked or is not final yet is CHAIN_UNAVAILABLE
//     (503, Retry-After) and nothing is written: retry, or use EnqueueX402.
func (e *Engine) IngestX402(ctx context.Context, accountID string, settleResponse, paymentRequirements, paymentPayload []byte, buyer BuyerFacts, idempotencyKey string) (*IngestResult, error) {
	acc, in, norm, pending, err := e.parseX402Ingest(accountID, settleResponse, paymentRequirements, paymentPayload, buyer, idempotencyKey)
	if err != nil {
		return nil, err
	}
	if pending {
		return e.enqueue(ctx, acc, in, norm, idempotencyKey, ingestReasonSettlementPending)
	}
	return e.ingestNow(ctx, e.x402Job(acc, in, norm, idempotencyKey))
}

// parseX402Ingest does every check of an x402 ingest that needs neither the
// ledger nor the chain.
func (e *Engine) parseX402Ingest(accountID string, settleResponse, paymentRequirements, paymentPayload []byte, buyer BuyerFacts, idemKey string) (*Account, x402Input, BuyerFacts, bool, error) {
	acc, ok := e.accounts.Get(accountID)
	if !ok {
		return nil, x402Input{}, BuyerFacts{}, false, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if err := validIdempotencyKey(idemKey); err != nil {
		return nil, x402Input{}, BuyerFacts{}, false, err
	}
	in, pending, err := parseX402(settleResponse, paymentRequirements, paymentPayload)
	if err != nil {
		return nil, x402Input{}, BuyerFacts{}, false, err
	}
	norm, err := buyer.normalised()
	if err != nil {
		return nil, x402Input{}, BuyerFacts{}, false, err
	}
	if err := e.requireChain(in.Network, "/settleResponse/network", "x402"); err != nil {
		return nil, x402Input{}, BuyerFacts{}, false, err
	}
	return acc, in, norm, pending, nil
}

// x402Job is the chain read of an x402 payment: evmverify.Verify of the
// claim the documents make (asset, payer, payTo, amount), which finds the
// one matching Transfer log and reads its block.
func (e *Engine) x402Job(acc *Account, in x402Input, buyer BuyerFacts, idemKey string) *ingestJob {
	amount, _ := new(big.Int).SetString(in.AmountAtomic, 10) // validated by parseAtomic
	claim := evmverify.Claim{
		Network:  in.Network,
		TxHash:   in.TxHash,
		Asset:    usdcContracts[in.Network],
		Payer:    in.Payer,
		Receiver: in.PayTo,
		Amount:   amount,
	}
	return &ingestJob{
		acc:         acc,
		idemKey:     idemKey,
		fingerprint: fingerprintOf(ProtocolX402, in, buyer),
		network:     in.Network,
		txHash:      in.TxHash,
		txField:     "/settleResponse/transaction",
		buyer:       buyer,
		protocol:    ProtocolX402,
		scheme:      SchemeExact,
		x402:        &RecordX402{Version: in.Version, ResourceURL: in.ResourceURL, TransferMethod: in.Method, Nonce: in.Nonce},
		read:        func(ctx context.Context) (evmverify.Facts, error) { return e.chain.Verify(ctx, claim) },
	}
}

// IngestTransfer records a plain USDC transfer (protocol evm-transfer,
// scheme erc20-transfer; spec §1, ingest "library"): the ERC-20 Transfer
// log at logIndex (the block-level log index) of transaction txHash on
// network is read from the chain (evmverify.Verifier.ReadTransfer), which
// supplies amount, payer, receiver and time; buyer carries the
// merchant-attested facts. The log must be emitted by the network's USDC
// contract. The network's chain mode must be "required"
// (CHAIN_VERIFICATION_REQUIRED otherwise), and its policy's depth applies.
//
// The chain proves that the transfer happened, not that its receiver is the
// account's wallet: that remains the merchant's attestation, as
// receiverWallet is on POST /settlements. One record per (network, tx hash)
// and per log: a transaction already recorded, by any path, answers
// Existing (this account, this log or no log recorded) or
// SETTLEMENT_CONFLICT (another account, or another log of the transaction).
func (e *Engine) IngestTransfer(ctx context.Context, accountID, network, txHash string, logIndex uint64, buyer BuyerFacts, idempotencyKey string) (*IngestResult, error) {
	acc, ok := e.accounts.Get(accountID)
	if !ok {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	if _, err := parseNetwork("/network", network); err != nil {
		return nil, err
	}
	hash, err := evmverify.ParseTxHash(txHash)
	if err != nil {
		return nil, badRequest("/txHash", "must be 0x followed by 64 hexadecimal digits")
	}
	norm, err := buyer.normalised()
	if err != nil {
		return nil, err
	}
	if err := e.requireChain(network, "/network", "evm-transfer"); err != nil {
		return nil, err
	}
	li := logIndex
	job := &ingestJob{
		acc:     acc,
		idemKey: idempotencyKey,
		fingerprint: fingerprintOf(ProtocolEVMTransfer, struct {
			Network  string `json:"network"`
			TxHash   string `json:"txHash"`
			LogIndex uint64 `json:"logIndex"`
		}{network, hash, logIndex}, norm),
		network:  network,
		txHash:   hash,
		txField:  "/txHash",
		logIndex: &li,
		buyer:    norm,
		protocol: ProtocolEVMTransfer,
		scheme:   SchemeERC20Transfer,
		read: func(ctx context.Context) (evmverify.Facts, error) {
			return e.chain.ReadTransfer(ctx, network, hash, logIndex)
		},
	}
	return e.ingestNow(ctx, job)
}

package fiscal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// Review statuses of a fiscal record (reviewStatus).
const (
	StatusProcessed     = "PROCESSED"
	StatusPendingReview = "PENDING_MANUAL_REVIEW"
)

// Reason codes the engine itself adds to a record pending review (the vat
// package adds its own, e.g. buyer_country_missing).
const (
	ReasonFXRateUnavailable = "fx_rate_unavailable"
	// ReasonFXRateDayInDoubt: under the rate of the day the supply's day
	// depends on the rate (the Art. 59c threshold) and no day's rate gives
	// back that day; the law does not say which wins (Prepare).
	ReasonFXRateDayInDoubt = "fx_rate_day_in_doubt"
)

// CustodyNone is the custody of every record: the engine never holds funds.
const CustodyNone = receipt.CustodyNone

// Record objects (Record.Object): what a stored document is, and the
// ledger index of an account's records of each kind by the time they were
// recorded (package listing walks it): key account \x00 createdAt (8-byte
// big-endian Unix nanoseconds) record id, in which a new record can only
// sort after the newest; a hit's ID is the record's id.
const (
	ObjectSettlement  = "settlement"
	ObjectFiscalEvent = "fiscal_event"

	TimeIndexSettlement  = indexAccountTime
	TimeIndexFiscalEvent = indexAccountFiscalEvents
)

// RecordX402 is what the x402 documents said beyond the settlement itself,
// kept on x402-ingested records for reconciliation (what x402 users ask
// for: https://github.com/x402-foundation/x402/issues/2833). It is not part
// of the signed receipt, whose format is frozen.
type RecordX402 struct {
	Version        int    `json:"x402Version"`
	ResourceURL    string `json:"resourceUrl,omitempty"`
	TransferMethod string `json:"transferMethod,omitempty"`     // eip3009 | permit2 | erc7710, from the payload's shape
	Nonce          string `json:"authorizationNonce,omitempty"` // the EIP-3009 nonce (bytes32), when the payload has one
}

// recordVersion is the in-band version of the fiscal record format; a
// backwards-incompatible change gets a new value, fields may be added.
const recordVersion = "fiscal402.record/1"

// The JSON encoders of Record, Event and the openings (json_gen.go) are
// generated from these types; a change to them fails TestJSONGenerated
// until they are generated again:
//
//go:generate go run -tags jsongen_bootstrap ../internal/jsongen/cmd/jsongen

// Record is a fiscal record: the 201 body of POST /settlements and the body
// of GET /settlements/{id}; its fields are documented here, in the package
// doc and in the OpenAPI Record schema. It is stored
// as JSON exactly as served.
type Record struct {
	ID             string            `json:"id"`     // event id, "x402-<32 hex>"
	Object         string            `json:"object"` // "settlement"
	Version        string            `json:"version"`
	Custody        string            `json:"custody"` // always "none"
	Environment    string            `json:"environment"`
	ReviewStatus   string            `json:"reviewStatus"`
	ReviewReasons  []vat.Reason      `json:"reviewReasons,omitempty"`
	Account        string            `json:"account"`
	CreatedAt      string            `json:"createdAt"` // when the service recorded it (RFC 3339 UTC)
	Settlement     RecordPayment     `json:"settlement"`
	Seller         RecordSeller      `json:"seller"`
	Buyer          RecordBuyer       `json:"buyer"`
	Supply         RecordSupply      `json:"supply"`
	Classification vat.Determination `json:"classification"`
	FX             RecordFX          `json:"fx"`
	Verification   Verification      `json:"verification"`
	X402           *RecordX402       `json:"x402,omitempty"`
	Invoice        *InvoiceRef       `json:"invoice,omitempty"` // absent while pending review: no invoice without a tax determination
	// Invoicing, when the account chose a mode other than per_payment
	// (Seller.Invoicing), says how the supply is invoiced: its own
	// invoice, the summary invoice of its buyer and month, or none, and
	// the rule relied on (invoicemode.go).
	Invoicing *RecordInvoicing `json:"invoicing,omitempty"`
	Fee       *Fee             `json:"fee,omitempty"` // the pricing policy's accrual; never a split of the settlement
	Receipt   ReceiptRef       `json:"receipt"`       // the receipt of the current revision
	Ledger    LedgerRef        `json:"ledger"`        // the entry of the current revision
	Revision  int              `json:"revision"`      // 1 for the first state; +1 per amendment entry
	History   []Revision       `json:"history"`       // every revision, oldest first; none is ever rewritten
	// Refunds is added to the record GET /settlements/{id} serves
	// (refunds.RecordView) once the settlement has refunds; it is never
	// part of the stored record, whose refunds are entries of their own.
	Refunds *RecordRefunds `json:"refunds,omitempty"`
	// InvoicedBy is added to the record GET /settlements/{id} serves
	// (invoicing.RecordView) once a summary invoice covers it; like Refunds it
	// is never part of the stored record (the summary is an entry of its
	// own, issued after the record).
	InvoicedBy *RecordInvoicedBy `json:"invoicedBy,omitempty"`
}

// RecordRefunds is what GET /settlements/{id} adds to a refunded
// settlement's record (member "refunds", package refunds): the totals and
// every refund as stored, oldest first.
type RecordRefunds struct {
	RefundedUSDC  string            `json:"refundedUsdc"`
	RemainingUSDC string            `json:"remainingUsdc"`
	Items         []json.RawMessage `json:"items"`
}

// Revision is one state a record went through, each a signed ledger entry
// of its own: the ledger is append-only and the original entry is never
// rewritten (ledger/doc.go).
type Revision struct {
	Revision      int          `json:"revision"`
	EventType     string       `json:"eventType"`
	ReviewStatus  string       `json:"reviewStatus"`
	ReviewReasons []vat.Reason `json:"reviewReasons,omitempty"`
	ReceiptID     string       `json:"receiptId"`
	At            string       `json:"at"`
	LedgerIndex   int64        `json:"ledgerIndex"`
	// Cause says what made a revision n ≥ 2 (the Cause constants).
	Cause string `json:"cause,omitempty"`
	// ResolvedBy and Note are the person and the note of a resolution.
	ResolvedBy string `json:"resolvedBy,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Fee is the service fee accrued on a record under the pricing policy in
// force (GET /v1/pricing): basis points of the gross EUR amount, accrued by policy,
// never collected from the settlement.
type Fee struct {
	Model      string `json:"model"` // "basis_points"
	BPS        string `json:"bps"`
	AccruedEUR string `json:"accruedEur"` // the exact fee rounded once to the cent; 0.00 for a micropayment's
	// AccruedEURExact is the exact fee (the exact gross × bps / 10,000)
	// at fx.ExactScale decimals, as netEurExact beside netEur: what a
	// total of fees adds and rounds once. Absent where no fee accrues (0
	// bps) and on earlier records.
	AccruedEURExact string `json:"accruedEurExact,omitempty"`
	Label           string `json:"label,omitempty"` // e.g. "free_during_beta"
	Collection      string `json:"collection"`      // "policy_accrual"
}

// RecordPayment is the settled payment as recorded (normalised request fields).
type RecordPayment struct {
	Protocol       string `json:"protocol"` // "x402" | "evm-transfer"
	Network        string `json:"network"`
	TxHash         string `json:"txHash"` // lower case
	LogIndex       *int64 `json:"logIndex,omitempty"`
	Asset          string `json:"asset"`
	AssetContract  string `json:"assetContract"`
	Scheme         string `json:"scheme"`
	AmountUSDC     string `json:"amountUsdc"`
	Timestamp      string `json:"timestamp"`
	PayerWallet    string `json:"payerWallet"`
	ReceiverWallet string `json:"receiverWallet"`
}

// RecordSeller is the seller as it stood in the account when the record was
// made (later account changes do not rewrite history).
type RecordSeller struct {
	LegalName string  `json:"legalName"`
	VATNumber string  `json:"vatNumber,omitempty"`
	LegalID   string  `json:"legalId,omitempty"`
	Country   string  `json:"country"`
	Address   Address `json:"address"`
}

// RecordBuyer is what the merchant attested about the buyer, plus the
// registry's answer about the buyer's VAT number when one was looked up.
type RecordBuyer struct {
	Country    string `json:"country,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	VATNumber  string `json:"vatNumber,omitempty"`
	// VATNumberAsGiven is the VAT number as the customer gave it when it
	// came without its country prefix and VATNumber is it read under the
	// buyer's country (settlement.Buyer.PrefixlessVATNumber), else empty.
	// Every revision is decided on it, so that each keeps the note
	// vat_number_prefix_supplied of the first.
	VATNumberAsGiven string `json:"vatNumberAsGiven,omitempty"`
	Name             string `json:"name,omitempty"`
	// Evidence are the items of the customer's location the merchant
	// relied on (Art. 24b, 24f Implementing Regulation 282/2011), values
	// included: the record is behind the account's key.
	Evidence []vat.Evidence `json:"locationEvidence,omitempty"`
	Attested string         `json:"attestedBy"` // "merchant"
	Registry *vies.Result   `json:"registry,omitempty"`
	// Address is the customer's address the merchant attested
	// (consumerAddress); a business sale's invoice takes it, else the
	// registry's (Art. 226(5)).
	Address *Address `json:"address,omitempty"`
}

// ForInvoiceLaw is the buyer as the invoicing rules read it
// (invoicelaw.BuyerParty, invoicelaw.AddressReason).
func (b RecordBuyer) ForInvoiceLaw() invoicelaw.Buyer {
	return invoicelaw.Buyer{Country: b.Country, PostalCode: b.PostalCode, Name: b.Name, Address: b.Address, Registry: b.Registry}
}

// RecordSupply describes what was sold.
type RecordSupply struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Conditions are the reduced-rate conditions attested for this supply
	// (the request's; the account's apply too).
	Conditions []string `json:"rateConditions,omitempty"`
	// Provider is the underlying provider of a service sold by an
	// electronic interface.
	Provider *vat.Provider `json:"underlyingProvider,omitempty"`
}

// RecordFX is the conversion to EUR with its provenance. Amounts are decimal
// strings with 2 decimals; netEur and vatEur are absent while the tax is not
// determined, every EUR amount is absent when no rate could be had.
type RecordFX struct {
	Pair       string   `json:"pair"` // "USDC/EUR"
	AmountUSDC string   `json:"amountUsdc"`
	USDCUSD    *fx.Peg  `json:"usdcUsd,omitempty"`
	USDPerEUR  *fx.Rate `json:"usdPerEur,omitempty"`
	GrossEUR   string   `json:"grossEur,omitempty"`
	NetEUR     string   `json:"netEur,omitempty"`
	VATEUR     string   `json:"vatEur,omitempty"`
	// The exact figures (12 decimals, net + VAT = gross exactly): what an
	// OSS return, an export or any total adds up, rounding the sum once.
	// The cent figures above are what the supply's own invoice issued
	// with the record, and its receipt, state (the exact VAT rounded
	// once, net = gross − VAT); an invoice issued for it alone later
	// (invoicing.IssueAlone) states its VAT as its taxable amount times
	// the rate (EN 16931 BR-CO-17), a cent apart for some micro amounts;
	// a summary invoice states per rate the supplies' exact net summed
	// and rounded once. Declare from the exact ones.
	GrossEURExact string `json:"grossEurExact,omitempty"`
	NetEURExact   string `json:"netEurExact,omitempty"`
	VATEURExact   string `json:"vatEurExact,omitempty"`
	Rounding      string `json:"rounding,omitempty"`
	Note          string `json:"note,omitempty"`
	// National is the VAT in the national currency of the state whose
	// invoicing rules apply, when that is not the euro (Art. 230
	// Directive 2006/112/EC; for GB the VAT in sterling): the rate with
	// its source and the rule that selects it. Absent when the invoice is
	// in the invoicing state's currency, or while the rate cannot be had
	// (the record is then pending review: national_rate_unavailable or
	// national_rate_required).
	National *RecordNationalFX `json:"national,omitempty"`
}

// RecordNationalFX is the supply's net amount and VAT in a national
// currency, converted from EUR at the ECB rate the state's rule selects
// (fx.ConvertEURToNational). The exact figures are the record's exact EUR
// net and VAT times the rate, unrounded (a product of decimals needs no
// rounding): what a national return adds up. Net and VAT are what the
// invoice states (BT-111 is VAT): the exact figures rounded once, half
// away from zero (Art. 230 Directive 2006/112/EC: the VAT payable in the
// national currency; an invoice issued before this rule states its cent
// figures converted and rounded, invoicelaw.RoundedOnce tells them apart).
type RecordNationalFX struct {
	Country  string      `json:"country"`  // the invoicing state (InvoiceRef.TaxCountry)
	Currency string      `json:"currency"` // ISO 4217, BT-6
	Basis    string      `json:"basis"`    // why the VAT is stated in it
	Rate     *fx.Rate    `json:"rate"`     // units of Currency per EUR, with its ECB series and publication
	Rule     fx.RateRule `json:"rule"`     // which rate the state's law selects, with the law
	NetExact string      `json:"netExact"`
	VATExact string      `json:"vatExact"`
	Net      string      `json:"net,omitempty"` // as the invoice states it; absent without an invoice
	VAT      string      `json:"vat,omitempty"` // BT-111; absent without an invoice
	Rounding string      `json:"rounding"`
}

// Verification says whether the payment was checked on chain.
type Verification struct {
	Chain string           `json:"chain"` // "verified" | "not_performed"
	Facts *evmverify.Facts `json:"facts,omitempty"`
}

// InvoiceRef points at the UBL invoice bound to the record.
type InvoiceRef struct {
	ID        string `json:"id"`
	Format    string `json:"format"`  // "UBL 2.1 Invoice"
	Profile   string `json:"profile"` // CustomizationID
	UBLSHA256 string `json:"ublSha256"`
	URL       string `json:"url"`
	// TaxCountry is the state whose invoicing rules the invoice follows
	// (Art. 219a Directive 2006/112/EC; GB for UK law), ISO 3166-1;
	// absent when none applies. TaxBasis cites why.
	TaxCountry string `json:"taxCountry,omitempty"`
	TaxBasis   string `json:"taxBasis,omitempty"`
	// IssueDate is the invoice's date of issue (BT-2).
	IssueDate string `json:"issueDate,omitempty"`
	// IssueDeadline, for a reverse-charge supply, is the last day the
	// invoice may be issued: the 15th of the month after the supply (Art.
	// 222 Directive 2006/112/EC). IssuedLate says it was issued after it
	// (a record that waited for review, or a late settlement): the
	// invoice is valid, but late under that article.
	IssueDeadline string `json:"issueDeadline,omitempty"`
	IssuedLate    bool   `json:"issuedLate,omitempty"`
}

// ReceiptRef points at the signed receipt of the record.
type ReceiptRef struct {
	ID   string `json:"id"`
	Spec string `json:"spec"`
	URL  string `json:"url"`
}

// LedgerRef locates the record in the Merkle log.
type LedgerRef struct {
	Origin string `json:"origin"`
	Index  int64  `json:"index"`
}

// EventID derives a deterministic id of a payment from (network,
// lower-case tx hash): the id the ingest queue gives a queued payment (read
// only by the account that queued it). Records are not named by it: their
// ids are keyed (Engine.recordID), because a receipt is public and an id
// anyone can compute from a transaction hash would let anyone fetch it.
func EventID(network, txHash string) string {
	h := sha256.Sum256([]byte(network + ":" + txHash))
	return "x402-" + hex.EncodeToString(h[:16])
}

// ReceiptID is the receipt id of an entry id: "rcpt_" and the entry id.
func ReceiptID(entryID string) string { return "rcpt_" + entryID }

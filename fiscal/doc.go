// Package fiscal is the engine core of fiscal402: it turns a settled USDC
// payment into an EU VAT fiscal record (classification, EUR amounts, UBL
// invoice, signed receipt, ledger entry) by composing the leaf packages vat,
// vies, fx, ubl, receipt, ledger and evmverify.
//
// A merchant that sells in its own name opens its books and settles:
//
//	books, err := fiscal.Open("books", fiscal.Seller{
//		LegalName: "Demo Digital Services Ltd", Country: "IE", VATNumber: "IE1234567T",
//		OverThreshold: true,
//	})
//	res, err := books.Settle(ctx, fiscal.SettlementRequest{AmountUSDC: "11.90", ...}, "order-1001")
//	invoice, _, err := books.Invoice(ctx, res.Record.ID)
//	receiptJSON, err := books.Receipt(ctx, res.Record.ID)
//
// (Example is the full program.) A host with several sellers builds one
// Engine with New and Config.Accounts and takes each seller's Books with
// Engine.Books. The engine never holds funds (custody "none") and is not
// tax advice.
//
// # The main path
//
// Books.Settle validates the request, answers replays and duplicates from
// the ledger, verifies the transfer on chain where a Config.Chain policy
// asks for it, looks up a buyer's VAT number (Config.VIES), determines the
// VAT treatment (vat.Determine), converts the USDC amount to EUR at the ECB
// reference rate (fx), splits the VAT-inclusive amount into net and VAT,
// renders the UBL invoice (ubl), signs the receipt (receipt) and appends
// record, invoice and receipt leaf to the ledger in one transaction
// (ledger). A nil error means the append was committed and fsynced: an
// acknowledged settlement is never lost.
//
// The same path serves the accessory packages (ingest, fiscalevent,
// sandbox): Engine.Prepare builds a Draft outside any lock, Engine.Issue
// renders its documents, Engine.Commit appends it with its claims, index
// postings and outbox event: the ordered stream of those events
// (OutboxEvents) is what package webhooks delivers.
//
// # Records
//
// A record is PROCESSED when the VAT treatment is determined, an ECB rate
// exists for its date and a compliant invoice could be issued; otherwise it
// is PENDING_MANUAL_REVIEW with machine-readable reviewReasons
// (buyer_country_missing, vat_number_unverified, fx_rate_unavailable,
// buyer_address_missing, national_rate_unavailable, invoice_rules_failed,
// ...). A pending record is stored, signed and logged like any other but has
// no invoice: without a tax determination there is nothing lawful to
// invoice, the VAT is never treated as 0 %, and an invoice the law would
// reject is not issued. A settled payment always gets its record. The record's JSON (Record) is versioned in-band by
// "version" (fiscal402.record/1); fields may be added, none are renamed.
//
// A record's state changes without any entry being rewritten: each state is
// a new signed ledger entry (revision n ≥ 2: entry id "<record id>-r<n>",
// receipt "rcpt_<record id>-r<n>" whose "supersedes" names the previous
// receipt). The first use is a VAT number the registry could not confirm:
// the engine re-asks in the background (RecheckPolicy; RecheckNow runs one
// pass) and appends the revision the answer decides.
//
// # Corrections
//
// A processed record is never rewritten: package refunds corrects a
// settlement by entries of their own, each with a UBL credit note (381,
// BillingReference to the invoice) that Books.CreditNoteDraft makes from
// the stored record and numbers in the account's credit-note series, and
// a receipt that supersedes the corrected one; Draft.OnCommit lets it
// check, in the entry's own transaction, that refunds never exceed the
// settled amount.
//
// # Invoicing law
//
// Each invoice follows the invoicing rules of one state (Art. 219a
// Directive 2006/112/EC; InvoiceRef.TaxCountry; package invoicelaw
// decides them and the engine applies them): where the supply is taxed;
// the supplier's state for a reverse charge or a supply outside the EU; the
// member state of identification for OSS supplies; the United Kingdom under
// the UK ruleset. Where that state's currency is not the euro the invoice
// also states the VAT in it (Art. 230; Record.FX.National) at the ECB rate
// its rule selects (package fx), and the sale waits for review when that
// rate cannot be had (national_rate_unavailable; for the UK, which accepts
// no ECB rate without HMRC's agreement, national_rate_required). A business
// sale's invoice carries the customer's full name and address (Art.
// 226(5)): the request's consumerAddress, else the registry's. Package ubl
// checks the rest (EN 16931, Peppol national rules, Art. 226(7), 362, UK
// reg. 14); whatever it would refuse becomes invoice_rules_failed with the
// rule ids. invoicelaw.Check (with Seller.ForInvoiceLaw) tells before any
// sale what an account lacks.
//
// Seller.Invoicing chooses per_payment invoices (the default), a summary
// invoice per buyer and calendar month (Art. 223; package invoicing
// issues it) or none where a consumer needs none under the OSS
// (Art. 219a(2)(b), 220(1)); Record.Invoicing says what each supply got and
// under which national rule (invoicemode.go). A business
// customer always gets an invoice (Art. 220(1)).
//
// # Money
//
// Amounts are decimal strings in JSON and decimal.Decimal in code, never
// floats. The settled USDC amount is what the buyer paid, VAT included:
// gross EUR = USDC ÷ ECB USD-per-EUR rate, rounded to the cent half away
// from zero; net = gross ÷ (1 + rate), rounded the same way; VAT = gross −
// net. Where no VAT is charged (reverse charge, outside scope), net = gross.
//
// # Identifiers and idempotency
//
// The record id is "x402-" + the first 16 bytes (hex) of HMAC-SHA256(the
// engine's record-id key, network ":" lower-case txHash): replays and
// replicas sharing the key agree, and nobody who only saw the payment on
// chain can compute it and fetch its public receipt (package recordid). Receipts are
// service.receipt/4.0.0 (before it 3.0.0, a JWS per receipt):
// nothing personal in clear, salted commitments the account opens
// (Books.Openings). The receipt id is
// "rcpt_" + record id, and Books.Receipt takes either. A (network, txHash)
// is recorded once across all accounts: a duplicate from the same account
// returns the existing record (Outcome Existing); from another it is
// SETTLEMENT_CONFLICT. An idempotency key (per account, kept forever) with
// the same request returns the original record (Outcome Replayed), as the
// first answer gave it even when a resolution or a re-decision revised it
// since (Books.Record reads the current revision); with a different one it
// is IDEMPOTENCY_CONFLICT. "The same request" means the
// same normalised facts: "1.5" and "1.50" are one amount.
//
// # Background work
//
// New starts, and Close stops, the registry re-check loop (when a registry
// is configured) and whatever accessories start with Engine.Go (the ingest
// queue, the webhook dispatcher). Config.NoBackground starts none of it.
//
// # Errors
//
// Every error a caller can act on is an *Error (take it with errors.As) with
// a stable Code (BAD_REQUEST, UNSUPPORTED_NETWORK, IDEMPOTENCY_CONFLICT,
// CHAIN_VERIFY_FAILED, DB_UNAVAILABLE, ...), the offending field as a JSON
// pointer, and a RetryAfter where retrying helps. Code.HTTPStatus is the one
// table that maps codes to HTTP status codes. "Unavailable" (a registry, a
// chain node, the store) is never reported as "invalid".
//
// # Determinism
//
// With a fixed Config.Clock and Config.Rand (keys), the same requests
// produce byte-identical records, invoices and receipts.
//
// # Performance
//
// The caller's share of a settlement (Prepare, Issue, and in Commit the
// numbering and sealing before the committer) is measured by
// BenchmarkPrepareIssue and BenchmarkSeal; BenchmarkSettle adds the
// ledger. The engine drafts invoices with one ubl.Renderer, which keeps
// each seller's checks and party block (ubl/doc.go). Sealing copies the
// record once (not twice) and sizes the openings' buffer for a
// transaction hash's opening (139 bytes, not 128): BenchmarkSeal 19.1 KB,
// 28 allocations -> 18.3 KB, 27 allocations, CPU per op (median of 5
// alternating runs, loaded 2-core VM) 38.8 -> 37.0 µs.
//
// A settlement's invoice, receipt leaf and openings are garbage once its
// entry's Append returned (the ledger encoded them into the entry's blob);
// Engine.release gives their buffers back (the invoice's to the renderer,
// ubl.Draft.Release; the others to the engine's pool) and the next
// settlements write into them, and Settle answers with the committed
// draft's record instead of a copy. At Go's default GOGC the collector
// runs in proportion to the bytes allocated against a live heap that
// reused buffers do not shrink: BenchmarkSettle at 64 callers allocated
// 42.0-42.4 KB per settlement and ran 11.05-11.45 collections per 1,000;
// with the buffers reused, 32.8-33.5 KB and 8.75-8.9 (five alternated
// pairs, 2-core VM).
package fiscal

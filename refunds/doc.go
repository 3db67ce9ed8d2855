// Package refunds records refunds of a settlement and their credit notes
// (issue 20): a refund of one of an account's settlements, full or
// partial, is a ledger entry of its own with its receipt, a UBL credit note
// (381) correcting the settlement's invoice at its original VAT rate and
// ECB rate, and the event settlement.refunded. The HTTP layer decodes a
// Request and makes one call:
//
//	res, err := refunds.Create(ctx, books, settlementID, refunds.Request{AmountUSDC: "5.00"}, idempotencyKey)
//
// The package builds its entry from the engine's blocks: the credit note
// and its numbering from fiscal.Books.CreditNoteDraft, the check of what
// remains from fiscal.Draft.OnCommit (run in the committer, in the
// refund's own ledger transaction), the commit from fiscal.Engine.Commit.
//
// # The shape of a refund in the ledger
//
// A refund is never a change of the settlement's record: it is a ledger
// entry of its own, appended after the settlement's, whose stored document
// is a Refund (object "refund", version "fiscal402.refund/1"):
//
//   - Entry id and refund id: "<settlement id>-refund-<n>", n = 1, 2, …
//     the refund's number among the settlement's refunds (Refund.Sequence).
//     The receipt id is "rcpt_" + refund id (GET /v1/receipts/{id} serves
//     it like any receipt). The record id of a refund id, for every helper
//     that strips "-r…", is its settlement's id.
//   - Refund.SettlementID names the original record, Refund.SupersedesReceipt
//     the receipt of the settlement's state the refund corrects (its
//     receipt's "supersedes"), Refund.OriginalInvoiceID the invoice the
//     credit note refers to (UBL BillingReference): the settlement's own
//     invoice, or the summary invoice that covers it (Art. 223 Directive
//     2006/112/EC), whose invoicing law and profile the credit note then
//     follows, crediting that one supply's refunded share. Its cents are
//     the running difference of the summary's credit notes at the
//     supply's VAT rate (the refunds' exact figures so far rounded once,
//     less what earlier credit notes credited: ledger bucket
//     "refund-summary-state", checked in the committer), so that they
//     never exceed what the summary charged at the rate and, every supply
//     refunded, credit exactly that.
//   - Refund.AmountUSDC is the refunded USDC (positive, ≤ 6 decimals);
//     RefundedUSDC and RemainingUSDC the settlement's totals after it.
//     Refund.Payment is the refund payment (the refunded USDC from the
//     settlement's receiver to its payer, at the refund's time, on the
//     refund transaction, whose block may not precede the settlement's;
//     without one, no txHash: RefundPayment);
//     Refund.OriginalSettlement the settlement's payment.
//   - Refund.FX is the correction in EUR: the refunded USDC converted at
//     the ORIGINAL record's ECB rate (FX.USDPerEUR is the original rate
//     object, unchanged) and split at the ORIGINAL VAT rate
//     (Classification is the original determination, unchanged). Its
//     amounts are NEGATIVE (gross, net, VAT, exact and to the cent): the
//     correction adds to the supply's figures. The refund that brings the
//     remaining amount to zero takes, for its exact figures, exactly what
//     remains of the original exact figures, so that a settlement refunded
//     in full (in one refund or several) nets to exactly zero EUR.
//     FX.National is the correction in the invoicing state's currency at
//     the original national rate, when the original had one.
//   - Refund.RefundDate is the local day of the refund in the time zone
//     the original supply was dated in (Classification.TimeZone, the
//     taxing state's): the day a return's correction is dated by.
//     Classification.SupplyDate stays the original supply's day: the
//     period the correction belongs to (Art. 61 Implementing Regulation
//     (EU) No 282/2011 lists corrections per original period).
//   - Refund.CreditNote is the UBL 2.1 credit note (type code 381): its
//     number from the account's credit-note series (the invoice prefix,
//     "CN-", the year of issue, six digits: "F402-CN-2026-000001"), drawn
//     in the committer from a gap-free sequence like invoice numbers, its
//     SHA-256 and where it is served (GET
//     /settlements/{id}/refunds/{rid}/ubl).
//   - Refund.Receipt is the refund's service.receipt/4.0.0: its settlement
//     is the refund transfer (amount_usdc the refunded USDC, tx_hash the
//     refund transaction's, or the original's when none was given, both
//     committed: receipt 4.0.0 requires one, and without a refund
//     transaction it names the payment refunded, not a refund transfer), fx the negative correction at the original rate,
//     classification the original's, invoice the credit note's number,
//     supersedes the receipt of the corrected state.
//
// # A supply whose summary invoice cannot be issued
//
// A credit note amends an issued invoice (Art. 219 Directive 2006/112/EC:
// a document amending the initial invoice, referring to it specifically
// and unambiguously; EN 16931 BG-3, BT-25), so the refund of a supply a
// summary invoice will cover waits for that summary while its month is
// open or while the summary can be issued (CREDIT_NOTE_REFUSED: issue it,
// then refund). But a month the summary refuses (INVOICE_RULES_FAILED:
// its supplies made under two seller VAT numbers, Art. 226(3); under
// another state's invoicing rules than recorded, Art. 219a; its records
// naming the buyer otherwise, Art. 226(5)) stays refused until the
// operator changes what it names, and for some causes (a VAT number that
// changed within the month) nothing the operator can change would issue
// it: waiting for it left the refund refused for ever. A summary invoice
// is the seller's option (Art. 223: member states "shall allow" it); a
// supply may always be invoiced on its own (Art. 220, 221). So once the
// month's summary is refused (invoicing.Refusal), the refund first
// invoices the refunded supply on its own (invoicing.IssueAlone: under the
// law, seller VAT number and buyer its record states, numbered in the
// account's series, its document saying why), which takes it out of the
// month's summary (issued later, when the rest allows it, without it), and
// the credit note corrects that invoice like any summary's. The engine
// never states for a supply what another record says, and never lets a
// supply be invoiced twice: the own invoice commits only while the month's
// summary is not issued, and a summary read before it is read again. Only
// when the supply cannot be invoiced even on its own (the profile now puts
// it under another state's rules) is the refund CREDIT_NOTE_REFUSED, naming
// both refusals and what to change first.
//
// # What a refund does not do
//
//   - It does not lower the account's Art. 59c running total
//     (fiscal/totals.go). Whether a price reduction after the supply (Art. 90
//     Directive 2006/112/EC) takes a year's total back under EUR 10,000
//     once it "exceeded" it is not settled by the text of Art. 59c(1)(c);
//     the engine does not guess, and the total keeps counting the supply.
//   - Only settlement records are refunded: a fiscal event (package
//     fiscalevent) is another object and answers NOT_FOUND here.
//   - A refund is never revised: a wrong refund is corrected by the
//     merchant's next document, not by rewriting this one.
//
// # Reading refunds
//
// List(ctx, books, settlementID) lists one settlement's refunds, oldest
// first. ByDate(ctx, books, from, to, fn) streams the account's refunds
// whose RefundDate is within [from, to] (YYYY-MM-DD, inclusive), ordered by
// RefundDate then recording time, without loading them all (ledger index
// "account-refunds"); ByRecording(ctx, books, from, to, fn) those
// recorded (CreatedAt) within [from, to], whatever their RefundDate.
// Document and CreditNote serve one refund and its
// credit note as stored; RecordView is the record GET /settlements/{id}
// serves, the settlement's refunds added (member "refunds",
// fiscal.RecordRefunds). Each refund is also an outbox event,
// settlement.refunded, whose data is the Refund document.
package refunds

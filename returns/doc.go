// Package returns turns an account's fiscal records into what it files and
// keeps for the tax authorities: the quarterly OSS VAT return, the records a
// member state of consumption may ask for, and an export of every record.
// Its one job is reporting over the ledger; it decides no tax (the records
// carry the decisions) and writes nothing to the ledger.
//
// # The OSS return
//
// OSS computes the return of one calendar quarter (Art. 369f Directive
// 2006/112/EC for the Union scheme, Art. 364 for the non-Union scheme) from
// the records whose date of supply falls in it. The date of supply is the
// local calendar day of the chargeable event in the taxing state, the day
// the invoice states as BT-72 (vat.Determination.SupplyDate); a record
// without one (written before the engine kept it) is dated by the UTC day
// of its settlement timestamp, and the return counts those records
// (DatedByUTC). DueDate is the last day to submit the return and pay its
// VAT, the end of the month following the quarter (Art. 369f and 369i;
// Art. 364 and 367), DueDateBasis the articles of the return's scheme.
//
// The return has, as Art. 369g (Union) and Art. 365 (non-Union) ask, per
// member state of consumption, per VAT rate and per supply type, the
// taxable amount and the VAT in euro; each line and correction names the
// type of its rate, standard or reduced, as its records state it
// (RateType), which the common electronic message of the return asks for
// (Annex III Commission Implementing Regulation (EU) 2020/194):
//
//   - Lines: supplies made from the member state of identification.
//   - FixedEstablishments: supplies made from fixed establishments in other
//     member states, in their own section per establishment (Art. 369g(3)).
//     A record names the establishment that supplied it in seller.country;
//     one naming an establishment outside the EU (a third-country business
//     identified where it has a fixed establishment, Art. 369a(2)) has no
//     section of its own and is counted with the member state of
//     identification, and Review says so. A record does not say from
//     which establishment a service was supplied: when the account states
//     fixed establishments in other member states, Review names each that
//     has no section, for a person to check.
//   - Corrections: changes to earlier periods recorded this quarter (a
//     refund of an earlier quarter's sale), per original period and member
//     state. From the third return period of 2021 changes to a return
//     "shall, after the submission of that VAT return, be made only by
//     adjustments in a subsequent return" (Art. 61(1)
//     Implementing Regulation (EU) No 282/2011 as replaced by Implementing
//     Regulation (EU) 2019/2026 and 2020/1112,
//     https://datenbank.nwb.de/Dokument/495230_61), which identify the
//     member state of consumption, the tax period and the VAT amount
//     (Art. 369g(4) and 365 Directive 2006/112/EC). A correction is
//     converted at the original period's end rate, so that it changes the
//     figure that return declared. The refunds are read with
//     refunds.ByDate, dated by their local day in the taxing state
//     (refunds.Refund.RefundDate); a refund of a supply of the same quarter
//     reduces that supply's line instead, and one of a supply outside the
//     OSS its summary in NotInOSS. Such adjustments are made "within three
//     years of the date on which the initial return was required to be
//     submitted" (Art. 61(2)): a refund of a quarter whose return was due
//     more than three years before this quarter's is no correction but is
//     counted in Excluded.TimeBarred, with the reason.
//   - MemberStates: the VAT due per member state, lines plus corrections.
//   - Payable: the VAT to pay, the sum of the member states' positive
//     balances. A state whose corrections leave its balance negative is
//     named in Payable.RefundedBy and is not offset against the others
//     (the VAT paid is distributed per member state of consumption, Art.
//     369i Directive 2006/112/EC); it refunds the balance itself. Total
//     nets every figure and is not the payment.
//   - Review: what a person must check before filing. Among it, the
//     records of the quarter pending review (excluded.pending), and the OSS
//     supplies of earlier quarters recorded in this quarter: each is in
//     its own quarter's return, and if that return was submitted before it
//     was recorded, it must be declared here as an adjustment (Art. 61(1));
//     the ledger does not know when a return was submitted. So too the OSS
//     supplies of earlier quarters that waited for review and were
//     resolved in this quarter: excluded.pending in a return of their
//     quarter asked for before, they are in its lines now. And a return
//     recomputed after its quarter does not change silently: it names the
//     supplies in its lines recorded or resolved after the quarter ended,
//     with the quarter in which that happened, whose return names them for
//     the adjustment; records of the quarter resolved after it to a
//     treatment outside the OSS are named too, with no adjustment (they
//     were in no figure; a determined record is never revised, so no
//     revision changes a treatment a return counted). Refunds alike: one
//     dated by the block of its transfer in a quarter that had ended when
//     it was recorded is in that quarter's figures, whose return says so,
//     and the return of the quarter it was recorded in names it for the
//     adjustment of the supply's period (laterefunds.go). Past the three
//     years of Art. 61(2) these review
//     lines say, as excluded.timeBarred does for refunds, that no OSS
//     return adjusts the quarter any more. And where refunds of supplies
//     counted toward the Art. 59c threshold bring a year that went over
//     EUR 10,000 back within it (the taxable amount is reduced, Art.
//     90(1)), Review names the year, the refunds and the supplies in the
//     lines taxed at destination because that year was over
//     (thresholdrefunds.go): the engine's running total only grows, and
//     it does not revise them. The year's total and the refunds are those
//     below the log checkpoint the return states (for a final return, one
//     covering the refunds it names), not the running totals as they
//     stand: a later sale of the year does not change a final return. The CSV form
//     (WriteCSV) carries each item as a row of section "review", before
//     the figures, its text in column "note".
//
// The return is that of one member state of identification. When the
// seller's changed within the quarter (Art. 57f Implementing Regulation
// (EU) No 282/2011), each state is owed a return "covering the supplies
// made during the respective periods in which the Member States have been
// the Member State of identification" (Art. 59(4)): Options.MemberState
// asks for one (default: the state of the quarter's last day), its days
// are Identification.From and To, and the other states' supplies are
// counted in Excluded.OtherState. A refund of a supply of a former state's
// days recorded in a quarter in which that state identifies the seller on
// no day is in no return: corrections after the former state's final
// return are discharged directly with the member state of consumption
// (Art. 61a(1)); Excluded.FormerState counts them, with that reason.
//
// What a supply was declared under (the OSS scheme and member state of
// identification, or the national return of the member state of
// consumption) is read from its record, not from the account's profile as
// it is now: the supply was decided and invoiced under the profile of its
// day, and its invoice's law says which (invoice.taxCountry and taxBasis,
// Art. 219a Directive 2006/112/EC; a refund's credit note repeats them),
// so a past quarter's return does not follow a later rewrite of the
// registrations. Where the profile now says otherwise for an entry's day,
// Review says so; an entry whose record does not state it is read from the
// profile, and Review says that too. A member state of identification the
// profile no longer states for the quarter may still be asked for
// (Options.MemberState) when supplies of the quarter were declared under
// it (declared.go), and is the default when every supply of the quarter
// was declared under it (several such states: asked for by name). The
// seller is named as the supplies' records kept it.
//
// Sales that are not OSS supplies are summarised apart in NotInOSS:
// domestic sales (the national return), reverse-charge sales (the recapitulative
// statement, Art. 262), sales outside the scope of EU VAT and UK sales, and
// destination-taxed consumer sales of a seller that states no registration
// for their OSS scheme but one in the member state of consumption (that
// state's return, Art. 214(1)(a); the schemes are an option, Art. 369b, 359).
// Records PENDING_MANUAL_REVIEW have no tax determination and are excluded
// and counted apart (Excluded.Pending): they are never guessed into a line.
// They are counted in the return of the member state of identification
// that the profile kept with them (the one they will be decided under,
// Books.SupplySeller) states for their day, not in every state's.
//
// # Currency
//
// The return is in euro. The records were priced in USDC; for the return the
// quarter's USDC total of each line is converted at the ECB rate of the last
// day of the quarter, or of the next publication if there is none that day:
// Art. 366(1)-(2) Directive 2006/112/EC for the non-Union scheme ("use the
// exchange rate applying on the last day of the tax period ... published by
// the European Central Bank for that day, or, if there is no publication on
// that day, on the next day of publication"; read at
// https://datenbank.nwb.de/Dokument/Anzeigen/452295_Article366/), and Art.
// 369h(1)-(2) for the Union scheme, which lays down the same rule
// (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112; Art. 369xh(2), in force from 1 July 2028, repeats the wording
// verbatim, https://datenbank.nwb.de/Dokument/452295_369xh). This is
// fx.PeriodEndRate (policy fx.PeriodEndOrNext). Each line shows both
// figures: TaxableAmountEUR and VATEUR at the period-end rate, which the
// return uses, and InvoiceTaxableAmountEUR and InvoiceVATEUR, the sum of the
// records' exact EUR amounts (converted at each chargeable event's rate,
// Art. 91(2)), so the difference is visible. These are not the sum of the
// issued invoices' VAT, which each invoice rounds on its own (a summary
// invoice per rate as taxable amount × rate, EN 16931 BR-CO-17) and which
// may differ from them by a cent per invoice and rate: the return says so
// in FX.InvoiceRule. Every sum adds exact figures
// (12 decimals; USDC at 6) and rounds once per line, half away from zero:
// gross = USDC ÷ rate, net and VAT split from the gross at the line's rate
// (fx.SplitGross), each rounded to cents once.
//
// A member state of identification that has not adopted the euro may
// require the return in its national currency (Art. 369h(1), 366(1); for
// all taxable persons there, Art. 61c Implementing Regulation (EU) No
// 282/2011). The engine does not hold which states do: such a return, in
// euro, says so in Review, naming the currency, for a person to check
// before filing.
//
// A quarter that has not ended, or whose period-end rate is not yet
// published, gives a provisional return (Status "provisional", without the
// period-end figures while the rate is missing; its corrections keep
// theirs, at their original periods' end rates, and so do the member
// state totals as far as they are made of them). So does a quarter with
// records pending review (excluded.pending): the return covers every
// supply of its period (Art. 369g), and StatusReason names them until
// they are decided. A closed quarter's return
// is final and the same bytes each time it is asked for, as long as no
// record of the quarter changes.
//
// # Recomputable
//
// Every line lists the ledger indexes of the entries it sums (sales and
// refunds; Records counts them), so
// an auditor holding the receipts (GET /v1/receipts/{id}; the receipt's
// tlog_proof names its index) recomputes every figure offline
// (examples/audit return). The return is signed with the receipt key as a
// statement (receipt.SignStatement, typ "fiscal402.oss-return+jws") over its
// content, which includes the signed log checkpoint it was computed at:
// the latest for a provisional return, and for a final one the checkpoint
// of the commit that appended the newest entry the return sums (so that
// the same quarter gives the same checkpoint, and the same bytes, each
// time).
//
// # Records on request
//
// Records answers a member state of consumption's request for the records
// of the supplies made there (Art. 63c Implementing Regulation (EU) No
// 282/2011; for the Union scheme Art. 369k Directive 2006/112/EC, to be
// made available electronically, Art. 63c(2)): one row per supply with each
// item of Art. 63c(1)(a)-(l) that the ledger holds, and the items it does
// not hold named in Missing, never invented (the ledger keeps no customer
// name for a consumer sale, no payments on account before the supply, and
// no later increase of the taxable amount). The row carries the receipt id
// the supply's facts can be checked against.
//
// The European Commission's Standard Audit File for OSS (SAF-OSS) is the
// reference layout for such records. Its XML schema was not available to
// this package: the row follows the order and grouping of Art. 63c(1), and
// the names and shape of the SAF-OSS elements, their code lists (supply
// type, rate type), date and amount formats were not checked against it.
//
// # Export
//
// Export streams every record of an account created in a time range as CSV
// or JSON Lines, one line per record, for an accountant's import.
package returns

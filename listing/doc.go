// Package listing pages through an account's records, newest first: its
// one job is the lists of GET /settlements and GET /v1/fiscal-events
// (filters, limits, opaque cursors: a walk lists each record committed
// before its first page once; Query says where a record committed during
// the walk appears).
//
// List walks the account's time index in the ledger (fiscal.TimeIndexSettlement,
// fiscal.TimeIndexFiscalEvent) and serves each record exactly as it is
// stored in its current revision, read by fiscal.Books.Indexed: verified
// against the log, the account's own, of the listed kind (a damaged index
// or record fails the whole list with LEDGER_INTEGRITY); it decides nothing
// and writes nothing. returns walks the same
// lists to build the OSS return and the exports.
//
//	page, err := listing.List(ctx, books, listing.Query{Limit: 50, TaxingCountry: "DE"})
//	// page.Data: the records; page.NextCursor for the next page while page.HasMore
package listing

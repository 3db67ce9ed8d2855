// Package listing pages through an account's records, newest first: its
// one job is the lists of GET /settlements and GET /v1/fiscal-events
// (filters, limits, opaque cursors that never skip or repeat a record).
//
// List reads with fiscal.Books.Scan, the engine's walk over the account's
// time index, and serves each record exactly as it is stored in its current
// revision; it decides nothing and writes nothing. returns walks the same
// lists to build the OSS return and the exports.
//
//	page, err := listing.List(ctx, books, listing.Query{Limit: 50, TaxingCountry: "DE"})
//	// page.Data: the records; page.NextCursor for the next page while page.HasMore
package listing

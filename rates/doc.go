// Package rates keeps an engine's ECB reference rates current: it fetches
// each working day's publication after 16:00 Frankfurt time (fx.Refresher,
// with retries and backoff), keeps the fetched documents in the engine's
// ledger file so that a restart serves them offline, and, whenever new
// rates arrive, has the engine decide again the settlements and fiscal
// events that waited for one (Retry): each becomes a new revision with its
// EUR amounts, receipt, invoice and event (settlement.processed,
// fiscal_event.revised).
//
// The engine must read its rates from the same fx.LiveTable:
//
//	live := fx.NewLiveTable(embedded)
//	engine, err := fiscal.New(fiscal.Config{Dir: dir, FX: live, ...})
//	refresher, err := rates.New(engine, live, rates.Options{})
//
// New restores the stored documents at once (before the first request is
// served) and runs the refresh loop as the engine's background work, so
// engine.Close stops it. Status reports the age of the newest rate.
//
// It also decides again the records stored while the engine's VAT rate
// table did not cover their day (date_outside_rate_table), once an engine
// runs with a table that does (RetryRateTable; RetryRateTableInBackground
// as the engine's background work, at start and, on a log shared by
// replicas, every minute): each becomes a new revision, cause
// fiscal.CauseRateTableLoaded. A record a person resolved is left to them.
//
// And it decides again the settlements (and fiscal events of the
// account's own sales, fiscalevent.RetryRegistrations) pending because the seller was not
// registered where they are taxed (seller_not_registered) once the
// account's registrations change (RetryRegistrations;
// RetryRegistrationsInBackground at start and after the host changes the
// accounts): a registration may be stated from a day already past (Art.
// 57d Implementing Regulation (EU) No 282/2011), cause
// fiscal.CauseRegistrationsChanged. Such settlements stored by a version
// that did not queue them are queued by its first run, once per account.
package rates

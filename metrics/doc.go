// Package metrics holds the Prometheus metrics of one fiscal402 service: the
// collectors the HTTP layer, the host and (through CommitObserver) the
// ledger report to, and the registry GET /metrics serves.
//
// It is built on github.com/prometheus/client_golang and imports no package
// of this module, so any of them can report to it through a small interface
// without an import cycle: a leaf such as the ledger only needs a value with
// the method ObserveCommit(batch int, fsync time.Duration).
//
// # Wire format
//
// Handler serves the Prometheus text exposition format (version 0.0.4; the
// OpenMetrics format on request, by content negotiation). Every metric is
// named fiscal402_*, except the Go runtime (go_*) and process (process_*)
// collectors that New registers. Labels are bounded sets: route patterns as
// the server mounts them ("POST /settlements", never the raw path), status
// codes, error codes, outcomes and queue names. No account id, key, wallet,
// VAT number or other personal data is ever a label.
//
//	fiscal402_http_request_duration_seconds{route}       histogram
//	fiscal402_http_requests_total{route,code}            counter
//	fiscal402_settlements_total{source,outcome,status}   counter
//	fiscal402_settlements_refused_total{source,code}     counter
//	fiscal402_ledger_commit_batch_size                   histogram (once the ledger reports)
//	fiscal402_ledger_commit_fsync_seconds                histogram (once the ledger reports)
//	fiscal402_ledger_entries                             gauge
//	fiscal402_review_queue{queue}                        gauge: vat_recheck, fx_wait, rate_table_wait, registration_wait
//	fiscal402_ingest_queue                               gauge
//	fiscal402_ingest_queue_oldest_due_seconds            gauge
//	fiscal402_webhook_backlog                            gauge: pending deliveries
//	fiscal402_webhook_backlog_oldest_due_seconds         gauge
//	fiscal402_webhook_deliveries_failed                  gauge: retained deliveries that failed for good
//	fiscal402_webhook_endpoints{state}                   gauge: ok, failing, disabled
//	fiscal402_fx_age_seconds                             gauge
//	fiscal402_fx_behind                                  gauge (0 or 1)
//	fiscal402_fx_refresh_failures                        gauge
//	fiscal402_vat_rate_table_remaining_seconds           gauge: until the VAT rate table's coverage ends
//	fiscal402_vat_rate_table_info{version,sha256}        gauge (1): the VAT rate table in use
//	fiscal402_ready{check}                               gauge (0 or 1), as of the last readiness probe
//	fiscal402_retention_pruned_total{kind}               counter
//	fiscal402_accounts_reloads_total{result}             counter
//	fiscal402_state_errors_total                         counter: a scrape could not read the state
//
// # Errors
//
// Observing never fails. A state function that returns an error (the
// ledger is closed, say) leaves its gauges out of that scrape and counts
// fiscal402_state_errors_total; the scrape itself still succeeds.
//
// # Determinism
//
// Metrics hold no global state: each New returns its own registry, so two
// servers in one process (tests) never share a counter.
package metrics

package fiscal

import "slices"

// Codes returns every error code of the code→status table, sorted, so that
// published documents (the OpenAPI problem schema, the reliability
// document) list exactly the codes the engine can return.
func Codes() []Code {
	out := make([]Code, 0, len(codeStatus))
	for c := range codeStatus {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Retryable reports whether a request that failed with c may succeed when
// sent again unchanged: 429 after its Retry-After, 5xx after a pause (RFC
// 9110 §15.6). Ingest requests are safe to repeat: the (network, txHash)
// claim and the Idempotency-Key make a repeat return the original record.
// Every 4xx other than 429 needs a changed request, and LEDGER_INTEGRITY
// (500) an operator.
func (c Code) Retryable() bool {
	if c == CodeLedgerIntegrity {
		return false // damaged data stays damaged: restore the ledger
	}
	s := c.HTTPStatus()
	return s == 429 || s >= 500
}

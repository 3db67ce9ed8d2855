package httpserver

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
)

// chainIdentifier matches what in evmverify's error text can locate the
// payer's transfer on chain: hex literals (a transaction or block hash, a
// wallet, a block number in a node's JSON-RPC quantity) and decimal
// numbers of four digits or more (a block number; a count of
// confirmations or an HTTP status is shorter). A CAIP-2 network id
// ("eip155:8453") is matched so as to be kept: it names the chain, not a
// transfer.
var chainIdentifier = regexp.MustCompile(`eip155:[0-9]+|0[xX][0-9a-fA-F]+|[0-9]{4,}`)

// withoutChainIdentifiers is s with every chainIdentifier but a network
// id replaced by "…".
func withoutChainIdentifiers(s string) string {
	return chainIdentifier.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "eip155:") {
			return m
		}
		return "…"
	})
}

// logChainUnavailable logs a 503 CHAIN_UNAVAILABLE. It is not a server
// failure but the expected answer while a transfer gathers confirmations
// (INFO) or while no node gives a trustworthy answer: one is down, behind,
// or reorganised between two calls (WARN, so that an outage shows); the
// client retries after Retry-After. The cause is logged without the
// identifiers that find the transfer on chain, hence the wallets, which no
// log line carries (README "Logs").
func (s *Server) logChainUnavailable(ctx context.Context, id string, fe *fiscal.Error) {
	level := slog.LevelWarn
	if nf := (*evmverify.NotFinalError)(nil); errors.As(fe, &nf) {
		level = slog.LevelInfo
	}
	s.log.Log(ctx, level, "chain unavailable; the client retries", "request_id", id, "code", fe.Code,
		"err", withoutChainIdentifiers(fe.Error()))
}

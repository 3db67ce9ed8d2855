// Package ingest records payments whose facts come from the chain: an x402
// settlement (the three documents a resource server or facilitator holds
// after settling) or a USDC Transfer log named by (network, tx hash, log
// index).
//
// An x402 hook runs inside the buyer's request, so it should not wait for
// block confirmations: Service.EnqueueX402 validates the documents, reads
// nothing from the chain and queues the payment durably in the ledger file
// (the queue entry and its later recorded state live in side buckets, each
// written in the same transaction as what it describes). The queue, run by
// the engine's background work (fiscal.Engine.Go; Options.NoQueue leaves it
// to the host, which calls Process), reads the Transfer log, waits for the
// network's confirmations, and records the payment through the engine's
// main path with the chain's amount, payer, receiver and block time. What
// the chain cannot answer yet is retried with exponential backoff; what it
// refuses fails with a reason. An entry is never lost and never recorded
// twice. Service.Status is its public state (object "x402_ingest").
// Service.QueueStats counts the queued entries for monitoring, and
// Service.Prune removes entries that ended (recorded or failed) before a
// retention cutoff, never a queued one, a record or a ledger claim.
//
// Service.RecordX402 and Service.RecordTransfer do the same synchronously.
// Both need on-chain verification in mode "required" for the network: x402
// documents are claims, not proof, and carry no settlement time.
//
// Example is a facilitator's post-settlement hook in full.
package ingest

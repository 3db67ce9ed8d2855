// Package catalog describes what the service does: the capability tokens,
// payment protocols, networks and assets, jurisdictions, receipt versions,
// request limits and pricing policy that the published documents (manifest,
// capability catalog, OpenAPI document) are made of, and the capability
// check that tells a caller, before ingest, how a corridor would be treated.
//
// The package-level tables (PaymentProtocols, SupportedNetworks,
// Jurisdictions, ReceiptVersions, ...) are fixed; a Service adds what depends
// on one engine's configuration (a VAT-number registry, chain verification,
// the rates it holds) and the pricing policy whose FeePolicy the engine
// accrues:
//
//	description := catalog.New(engine, catalog.DefaultPricing())
//	cat := description.Catalog() // GET /v1/capabilities
//	c, err := description.CheckCapabilities(ctx, accountID, catalog.CapabilityCheckRequest{
//		SellerCountry: "IE", BuyerCountry: "DE", SupplyType: "digital_service", BuyerType: "B2C",
//		Payment: catalog.CheckPayment{Protocol: "x402", Network: "eip155:8453", Asset: "USDC"},
//	})
//
// The engine's behaviour reads the same values (request validation, the
// receipt version of a jurisdiction), so what the service says and what it
// does cannot drift apart.
//
// # Wire format
//
// Catalog is the body of GET /v1/capabilities and CapabilityCheck the 200
// body of POST /v1/capabilities/check: five aspects (event support, payment
// support, jurisdiction representation, determination coverage, receipt
// eligibility), each with its own status and machine-readable reasons.
// Versions of the description are APIVersion, ProtocolVersion and
// ManifestSchemaVersion; fields may be added, none are renamed.
//
// # Errors
//
// Only malformed input is an error of the check: a *fiscal.Error with code
// BAD_REQUEST naming the JSON pointer of the member (an account id the
// engine does not know is the engine's error for it). An unsupported
// protocol, network, asset, buyer type or supply type is an answer (a
// status with reasons), not an error.
//
// # Determinism
//
// The tables are constants of the build. A capability check depends only on
// the request, the engine's clock (the default supply date), its rates and
// its configuration, and writes nothing.
package catalog

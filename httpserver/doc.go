// Package httpserver exposes a fiscal.Engine over HTTP as the endpoints of the
// service specification; every handler decodes, makes one engine call and
// encodes.
//
// # Published documents
//
// The server describes itself: the manifest (/.well-known/service.json),
// the OpenAPI 3.1 document (/openapi.json), an A2A-style agent card, the
// capability catalog, the pricing policy and the reliability, discovery,
// preference and seller-value documents. Their facts come from package
// fiscal's values and from the route table, never from literals here; they
// are public, cached per base URL (Options.PublicURL, else the request's
// host) and served with a strong ETag.
//
// # OpenAPI
//
// The document is built from the route table (routes, server.go) and the
// operation table (operations, openapi.go), keyed by "METHOD path". Schemas
// are derived by reflection from the Go types the handlers decode and
// encode; request types reject unknown members, as their decoders do. A
// route without an operation fails TestOpenAPICoversRoutes, which names it.
package httpserver

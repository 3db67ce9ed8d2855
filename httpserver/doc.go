// Package httpserver exposes a fiscal.Engine over HTTP as the endpoints of the
// service specification; every handler decodes, makes one engine call and
// encodes.
package httpserver

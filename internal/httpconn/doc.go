// Package httpconn sends a whole HTTP/1.1 response in one write system call.
//
// net/http writes a response through a 4 KB buffer per connection, so an
// answer of more than 4 KB with its header (a settlement's record is
// ~4.2 KB) leaves in two write(2) calls: the full buffer, then the rest
// when the handler returns. On loopback each write is a TCP segment the
// kernel carries to the reader and a wake-up of the reader; on the bundled
// server's hot path (POST /settlements, 32 clients, 2 CPUs) the second
// write cost ~4 % of the server's CPU and made the client read twice
// (bench/HISTORY.md, stop 50 of issue 22).
//
// A Listener's connections hold the writes of a response that its handler
// marked whole (Whole, before writing it) and send them together when
// net/http has finished the response: net/http clears the write deadline
// right after it (SetWriteDeadline with the zero time; the held bytes are
// written first, under the deadline still in force, so http.Server's
// WriteTimeout keeps bounding them), and marks the connection idle
// (http.Server.ConnState: Configure installs the hook, the documented
// backstop should a later net/http stop clearing the deadline). A Close
// or CloseWrite writes what is held first (a Close from another goroutine
// while a write is under way does not wait for it). A held response that
// cannot be written closes the connection, as net/http's own failed write
// would: no request is read after a cut answer. A connection keeps no
// buffer between responses (the listener lends them). A response larger than
// MaxHeld bytes leaves as net/http writes it once the limit is passed;
// responses not marked whole, streams that call http.Flusher among them,
// are never held, and neither is anything after a hijack.
//
// Wiring (examples/server): wrap the listener with Listener, call Configure
// on the http.Server, and call Whole(r.Context()) in a handler before it
// writes a response it writes in one piece (httpserver does for its JSON
// and document answers). Without the wiring Whole does nothing.
package httpconn

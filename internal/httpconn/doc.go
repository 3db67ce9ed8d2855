// Package httpconn sends a whole HTTP/1.1 answer in one write system call.
//
// net/http writes an answer through a 4 KB buffer per connection, so an
// answer of more than 4 KB with its header (a settlement's record is
// ~4.2 KB) leaves in two write(2) calls: the full buffer while the handler
// writes, then the rest when net/http finishes the answer. On loopback
// each write is a TCP segment the kernel carries to the reader and a
// wake-up of the reader; on the bundled server's hot path (POST
// /settlements, 32 clients, 2 CPUs) the two writes took ~8 % of the
// server's CPU and made the client read twice (bench/HISTORY.md, stop 50
// of issue 22).
//
// A Listener's connection holds the first write of an answer its handler
// marked whole (Whole, before writing it) when that write is net/http's
// full buffer and the answer's header says more follows (a Content-Length,
// no chunks, at most MaxHeld bytes in all). The answer's next write, which
// net/http makes at the latest when it finishes the answer and before it
// reads anything more from the connection, sends both at once; an error of
// that write is returned to net/http, which closes the connection as it
// would after any failed write. Nothing else changes: every other write
// goes out as it comes, no lock is held across a system call, deadlines
// are the connection's own, and a Close drops a write still held (the
// answer it began was cut: a handler that panicked or wrote less than its
// Content-Length, a Server.Close) without writing. A held write's buffer
// is lent by the listener, so an idle connection keeps none.
//
// Wiring (examples/server): wrap the listener with Listener, call Configure
// on the http.Server (it puts the connection in each request's context),
// and call Whole(r.Context()) in a handler before it writes an answer in
// one piece (httpserver does for its JSON and document answers). Without
// the wiring Whole does nothing.
//
// A first design held every write of a whole answer and sent them when
// net/http cleared the write deadline after the answer; a review showed it
// deadlocked an answer sent before the request body was read (Expect:
// 100-continue), hid a failed write from net/http (a pipelined request was
// then served after a cut answer), made Server.Close write, and queued
// deadlines behind writes. nethttp_test.go runs each of those paths against
// a plain net/http server and the wired one.
package httpconn

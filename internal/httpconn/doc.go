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
// would after any failed write. The mark is one answer's: the answer's
// first write uses it up, and a Whole whose request has ended (a handler
// a TimeoutHandler gave up on) does nothing. A write is still held only
// when its answer was cut exactly at the buffer (a handler that panicked
// or wrote less than its Content-Length, a Server.Close while it ran):
// Close then sends it before closing, so that the client gets the cut
// answer net/http would have sent, not a connection closed before any
// byte, which Go's Transport would answer by sending the request again;
// CloseWrite (net/http's close after an unread request body) and a hijack
// send it too. A write is held only before the write deadline net/http set
// (past it, a plain connection's write fails, and so does this one); when
// the deadline passes while it is held, or a Close from another goroutine
// (Server.Close) cuts short the write of it with the answer's rest, the
// held bytes are sent anyway, since a plain connection had sent them when
// net/http wrote them (that Close waits for it). Each of those sends is
// bounded (100 ms: a client that does not read cannot hold up a
// Server.Close or a Hijack) and leaves the write deadline as net/http set
// it (a deadline set while a Close waits cannot lift that bound). Nothing
// else changes: every other write goes out as it comes, no
// lock is held across a write's system call (those bounded sends excepted:
// a deadline set meanwhile waits for them), deadlines are the
// connection's own. A held write's buffer is lent by the listener, so an
// idle connection keeps none.
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
// then served after a cut answer), made Server.Close wait on a client,
// and queued deadlines behind writes; a review of this design found a mark
// that outlived its answer and a cut answer dropped whole; a third found a
// held write dropped whole by a passed write deadline and by CloseWrite,
// and a hijack that sent it without a deadline; a fourth, of those fixes,
// a write held past its deadline (then sent, which a plain connection
// never did) and a Server.Close that dropped held bytes in flight; a
// fifth, of that fix, a Close whose bound a concurrent SetWriteDeadline
// lifted and a panic of the connection underneath that left Close
// waiting for ever. nethttp_test.go and
// nethttp_more_test.go run each of those paths against a plain net/http
// server and the wired one, and raw request scripts through both.
package httpconn

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
// net/http makes at the latest when it finishes the answer, sends both at
// once; an error of that write is returned to net/http, which closes the
// connection as it would after any failed write. The mark is one answer's:
// the answer's first write uses it up, each request starts without one (a
// Whole after its answer's last write is forgotten), and a Whole whose
// request has ended (a handler a TimeoutHandler gave up on) does nothing.
//
// Whole is a promise of the handler: having called it, it writes its
// answer (its request body already read, or never to be) and returns,
// without a flush, a hijack, a read of the body or a wait on the client
// in between. httpserver's JSON and document answers keep it. A handler
// that breaks it is served, but the held bytes wait for its next write: a
// full-duplex handler (ResponseController.EnableFullDuplex) that reads a
// body its client sends only once the answer's header arrived waits for
// ever.
//
// A write is still held only when its answer was cut exactly at the
// buffer (a handler that panicked or wrote less than its Content-Length, a
// Server.Close while it ran): Close then has it sent before the connection
// closes, by a goroutine of the connection's own (Close returns at once,
// and every read and write after it fails as on a closed connection, the
// read under way too, so that net/http ends the request's context at
// once), so that the
// client gets the cut answer net/http would have sent, not a connection
// closed before any byte, which Go's Transport would answer by sending the
// request again; CloseWrite (net/http's close after an unread request
// body) and a hijack send it too. A write is held only before the
// write deadline net/http set (past it, a plain connection's write fails,
// and so does this one); when the deadline passes while it is held, the
// held bytes are sent anyway, since a plain connection had sent them when
// net/http wrote them; so are they when the connection underneath panics
// in the write of them. Each of those sends is bounded (100 ms: a client
// that does not read cannot hold up a Server.Close or a Hijack, where a
// plain connection's write would have had net/http's deadline) and leaves
// the write deadline as net/http set it. Close does not wait on a client
// (only, 100 ms at most, behind such a bounded send already under way): a
// Close that waited, even bounded, made Server.Close (which closes one
// connection after another) wait on every client that does not read. So a
// Server.Close from another goroutine that lands between a write taking
// the held bytes and its system call (nanoseconds, unless the goroutine is
// preempted exactly there) closes before they leave, where a plain
// connection had sent them. Nothing else changes: every other write goes
// out as it comes, no lock is held across a write's system call (those
// bounded sends excepted: a deadline set meanwhile waits for them),
// deadlines are the connection's own. A held write's buffer is lent by the
// listener, so an idle connection keeps none.
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
// never did) and a Server.Close that dropped held bytes in flight; the
// fix of that (Close waiting for the write in flight) made Server.Close
// wait on clients, which a fifth and a sixth review showed three ways, and
// is gone; a seventh found a mark left after an answer's last write, and
// Close's own send of a held write still made Server.Close wait, one
// connection after another; an eighth, that with that send handed to a
// goroutine, the connection's reads went on meanwhile, so that net/http
// did not end the request's context; a ninth, that net/http's CloseWrite
// after such a Close cut the send (a CloseWrite after Close now does
// nothing); a tenth, that a connection underneath that panics in those
// sends left the lock held or ended the process. nethttp_panic_test.go
// keeps those. nethttp_test.go and nethttp_more_test.go run each of those
// paths against a plain net/http server and the wired one, and raw request
// scripts through both.
package httpconn

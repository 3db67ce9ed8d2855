// Package faultfs gives tests a directory whose fsyncs fail on request, as a
// failing disk's do: one job, a real kernel file system (FUSE) in front of a
// real directory, so that a program under test meets EIO from its own
// fdatasync(2) call, not from a stand-in function.
//
// # What Mount builds
//
// A FUSE mount (github.com/hanwen/go-fuse/v2) of a loopback file system
// over a new backing directory: every file operation is the backing file's,
// through the kernel's FUSE client, so mmap(2), pwrite(2), flock(2),
// ftruncate(2) and fsync(2)/fdatasync(2) behave as on a disk file system.
// The file system records, per open file, the byte ranges written since
// that file's last sync. FailSyncAfterWriteTo and FailSyncAfterWriteOutside
// arm a one-shot fault: the first later sync of a file whose writes since
// its last sync meet (or all miss) a byte range answers EIO, which the
// kernel passes to the program's fsync or fdatasync. The backing file keeps
// what was written: the failure is the program's to see, not a loss of
// data, which is what a test of the program's reaction needs (Linux, too,
// reports a failed write-back once and keeps showing the pages in its page
// cache).
//
// # Why a child process
//
// The mount is served by cmd/faultfsd, a child of the test process (built
// once per test binary with go build), which takes its commands on stdin.
// Served in the test process itself, a test that ends with a file of the
// mount still open (a failure, a panic, a timeout) would hang for good: the
// kernel flushes the process's open files as it exits, and waits for the
// FUSE server that was exiting with it. The child outlives its parent's
// files, then unmounts when its stdin ends, however the test ended.
//
// # What it needs
//
// Root (the mount is made with mount(2) directly: no fusermount), /dev/fuse
// and the go command. Without root or /dev/fuse, Mount skips the test, or
// fails it under FISCAL402_STRICT=1 (internal/testtool). Lock requests stay
// with the kernel (FUSE locks are not enabled), so flock works as on a
// local file system; no passthrough file is offered, so every write
// reaches the file system.
package faultfs

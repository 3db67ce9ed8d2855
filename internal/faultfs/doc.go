// Package faultfs gives tests a directory whose disk fails on request: one
// job, a real kernel file system (FUSE) in front of a real directory, so
// that a program under test meets EIO from its own fdatasync(2) call, not
// from a stand-in function, and loses what a power cut loses.
//
// # What Mount builds
//
// A FUSE mount (github.com/hanwen/go-fuse/v2) of a loopback file system
// over a new backing directory: every file operation is the backing file's,
// through the kernel's FUSE client, so mmap(2), pwrite(2), flock(2),
// ftruncate(2) and fsync(2)/fdatasync(2) behave as on a disk file system.
// The file system records, per open file, the byte ranges written since
// that file's last sync. FailSyncAfterWriteTo and FailSyncAfterWriteOutside
// arm a one-shot fault on one file: its first later sync whose writes since
// the last sync meet (or all miss) a byte range answers EIO, which the
// kernel passes to the program's fsync or fdatasync. The backing file keeps
// what was written: the failure is the program's to see, not a loss of
// data, which is what a test of the program's reaction needs (Linux, too,
// reports a failed write-back once and keeps showing the pages in its page
// cache).
//
// # Power cuts
//
// The file system also models a disk's volatile cache. It writes through
// to the backing file and remembers, for each 4 KB block first written
// since its file's last sync (fsync or fdatasync, through any handle), the
// bytes the block held at that sync; a sync forgets them. Files are
// followed by their backing inode, which the model learns from the open
// descriptor itself, so a rename keeps what was written under the old
// name, and a file created on the mount (create, mknod) starts afresh
// even where it reuses a removed file's inode number. A power cut
// (PowerCutAtSyncAfterWriteTo, PowerCutAtSyncAfterWriteOutside: at the
// sync FailSyncAfter... would fail; PowerCutAtSync: before the k-th sync
// from now; PowerCutAtWrite: before the k-th write; PowerCut: now) writes
// to the directory Disk what a disk would hold once the power came back:
// every regular file of the backing tree (modes, directories and symbolic
// links as they are; the names of one file one file, hard links kept;
// FIFOs and device nodes left out), each of
// its unsynced blocks kept with probability keep/1000 and otherwise put
// back as it was at the last sync (write-back writes pages in no promised
// order: any subset may have reached the disk), a file that grew since
// its last sync ending after its last kept block. The draw is seeded: a
// cut repeats as far as the program's writes before it do.
// PowerCutAtSyncKeepingOnly draws nothing: the disk keeps exactly the
// unsynced blocks of one file's range and none of the others, the order a
// program's barriers must survive (a new bbolt meta page on the disk and
// none of the pages it points at).
//
// From the cut on, every write, sync (of a file or a directory),
// truncation (ftruncate, truncate, open with O_TRUNC), allocation and
// change of names (create, mknod, mkdir, rmdir, unlink, rename, link,
// symlink) answers EIO, so that nothing more is acknowledged; every change
// of names holds the lock the cut holds, so the cut sees one tree. Reads
// go on from the backing files (the page cache of a machine about to
// stop), so that the program's own rollback reads what it wrote. The test
// then stops the program (a machine without power runs nothing more) and
// opens what Disk holds. A cut that could not write Disk fails the test at
// its next Stats, or at its end.
//
// Outside the model: directory operations count as durable at once, as if
// each were followed by a sync of its directory, so a missing directory
// fsync goes unseen; a file counts as synced at the size it had when first
// written through the mount; a truncation and an allocation are durable at
// once (the file's synced size becomes its new size); O_TMPFILE is
// refused (EOPNOTSUPP), so that no unnamed file's writes escape the
// model. A block is the unit of loss, never a torn part of one (a disk's
// sector is smaller).
//
// For the FailSyncAfterWrite* rules, what counts as a write: data written
// through the file handle that syncs, with write(2), pwrite(2),
// copy_file_range(2) or a writable shared mapping. Not counted: writes
// through another open handle of the same file (each handle keeps its own
// list, where a disk's sync would cover them all), fallocate(2) and
// truncation; a handle keeps the name it was opened under across a
// rename. bbolt, this package's reason, writes with pwrite(2) through the
// one handle it syncs, and maps its file read-only.
//
// # Why a child process
//
// The mount is served by a child of the test process: the test binary
// itself, started again with an environment that the package's init reads
// (it serves and exits instead of running tests), taking its commands on
// stdin. Served in the test process, a test that ends with a file of the
// mount still open (a failure, a panic, a timeout, SIGKILL) would hang for
// good: the kernel flushes the process's open files as it exits, and waits
// for the FUSE server that was exiting with it. The child outlives its
// parent's files and unmounts when its stdin ends, however the test ended;
// it ignores SIGINT, SIGTERM, SIGHUP and SIGPIPE so that a signal to the
// process group, or an answer to a dead parent, cannot end it first. A
// child that dies anyway leaves a dead mount ("transport endpoint is not
// connected"; nothing waits on it), which Mount's cleanup detaches; if the
// test process dies with it (SIGKILL to the whole process group), the dead
// mount and its temporary directories stay until `umount -l`. The child
// is not counted in a -cover run's profile.
//
// # What it needs
//
// Linux, root (the mount is made with mount(2) directly: no fusermount)
// and /dev/fuse. Without them Mount skips the test, or fails it under
// FISCAL402_STRICT=1 (internal/testtool). Lock requests stay
// with the kernel (FUSE locks are not enabled), so flock works as on a
// local file system; no passthrough file is offered, so every write
// reaches the file system.
package faultfs

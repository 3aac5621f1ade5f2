// Package warc owns sonda's raw capture archive: it writes every fetch as
// WARC 1.1 records (ISO 28500:2017) into size-rotated .warc.gz files, reads
// them back, verifies their digests, and repairs the file a crash left open.
//
// No Go WARC library is available to this project, so the format is
// implemented here, from the specification, in the small subset a crawler
// needs: 'warcinfo', 'request', 'response' and 'metadata' records written by
// [Writer.WriteCapture], any record through [Writer.WriteRecord], and a
// [Reader] that accepts WARC 1.0 and 1.1, plain or gzip (one member per
// record, as the specification's Annex recommends, or several records per
// member). Files are cross-checked against an independent implementation
// (warcio.js) in the tests.
//
// # File layout
//
// Files are named PREFIX-YYYYMMDDHHMMSS-NNNNN-RANDOM.warc.gz (start time in
// UTC, a serial that continues from the files already in the directory, and
// random hex so two processes never collide). Each file starts with a
// 'warcinfo' record; every later record names it in WARC-Warcinfo-ID. With
// gzip on (the default) each record is its own gzip member, so a record can
// be read alone from its [Location] without decompressing what precedes it.
//
// # Durability
//
// The threat the writer is built for is the crawler being killed (kill -9,
// OOM killer, panic) at any instant:
//
//   - Each capture (its request, response and metadata records) is
//     serialized and compressed in memory and handed to the operating
//     system with a single write call. A capture is therefore either wholly
//     in the file, or is the file's torn tail.
//   - The file being written carries the suffix ".open". It is fsynced and
//     renamed to its final name when it is rotated or the writer is closed,
//     so a file without the suffix is complete.
//   - [Recover], called at start-up, finds leftover ".open" files, cuts off
//     a torn tail (bytes after the last intact record that read as a clean
//     prefix of one), and renames them. A record is intact when its gzip
//     member, trailer included, decodes and its digests match. A capture cut
//     short by the kill is lost; every capture whose WriteCapture returned is
//     kept.
//   - Damage anywhere else (a flipped byte, a bad sector) costs only the
//     records it hit: Recover resynchronises on the next intact record,
//     copies the damaged bytes to NAME.damaged-OFFSET, and overwrites them
//     with empty gzip members of the same length, so that every other record
//     keeps its offset and the Locations stored elsewhere stay valid.
//   - A new [Writer] always starts a new file; it never appends to an old one.
//
// Data written before a kill lives in the OS page cache and survives the
// process. It does not survive a power failure or kernel crash until it is
// fsynced: that happens at rotation, at Close, and when the caller asks with
// [Writer.Sync] (for example before recording a checkpoint that refers to a
// [Location]). A failed write is rolled back by truncating the file to its
// previous size; if even that fails the writer refuses further writes
// rather than append after a broken record.
package warc

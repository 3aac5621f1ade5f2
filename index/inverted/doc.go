// Package inverted owns sonda's own inverted-index segments: their file format, the
// builder that turns analyzed pages into a segment, the reader that gives a term's
// postings to the search as flat arrays, and the merge of several segments into one.
//
// # Why sonda writes its own segments
//
// The search index is Bleve's (scorch, zap segments), and on the crawl's path building
// zap segments costs about 1 ms of CPU per page of ~11 KB of prose, half the crawl's
// whole budget of 2 ms a page (docs/benchmarks.md, issue 12, "Why Bleve cannot reach
// 2 ms"): zap takes each page as a map of terms, each occurrence as a pointer to a
// location record, looks every term up in a Go map twice per page, copies every
// position into a record of its own, and sorts and encodes every term of every small
// segment again. The query side already reads the postings through sonda's own code
// (index/postings.go decodes them into arrays of documents, frequencies and positions),
// so what the index needs from a segment is little: per field, a sorted dictionary of
// terms and each term's postings. This package builds exactly that, in bulk: a page adds
// its fields as flat slices (its distinct terms, their frequencies and positions), the
// builder gives every distinct term of a field an integer ID once (one map lookup per
// posting, no per-page maps, no per-occurrence records), and writing the segment sorts
// the terms once and the postings by a counting sort on the term's rank, which keeps
// each term's postings in document order for free; each term's postings are then
// written once. A merge reads its inputs' terms in order and copies each term's
// positions as bytes.
//
// The package is not yet used by the crawl or the search: it is the first piece of the
// write side described in docs/benchmarks.md (issue 12, "The alternative, concretely");
// wiring it in, with a `sonda index rebuild` migration, comes next.
//
// # The format (version 1)
//
// A segment is one file: a header ("sondaseg" and a version byte), then for each field,
// in byte order of the field names, its regions, then a table of the fields and a
// trailer. Numbers are uvarints unless said otherwise.
//
//   - Lengths: the field's analyzed length in each document that has the field, as pairs
//     (document gap, length), the gap being the document's number minus the previous
//     one's minus one (the first: its number). A term's postings report the length with
//     each document, as zap's norm does.
//   - Postings: each term's, in the dictionary's order, one after the other: the
//     documents and frequencies in blocks of 128 postings (the last block holds the
//     rest), then, when the field keeps positions, every posting's positions. A block
//     starts with its last document minus one more than the previous block's last (0 for
//     the first block: minus 0), the bytes of its documents and frequencies, and the
//     bytes of its positions, so that a reader can skip a block whole; then each posting
//     as its document gap (as above) shifted left by one, with the low bit set when the
//     frequency is 1, and otherwise followed by the frequency minus 2. A posting's
//     positions are its first position and the differences to the next ones.
//   - Dictionary: the terms in byte order, in blocks of 32: each term as the length of
//     the prefix it shares with the previous term in its block (0 for a block's first),
//     the rest (length, bytes), the number of documents that have it, the bytes of its
//     documents and frequencies and the bytes of its positions.
//   - Block index: for each dictionary block, the offset of its first term in the
//     dictionary (4 bytes) and of that term's postings in the file (8 bytes), little
//     endian; a term is found by a binary search over the blocks' first terms and a scan
//     of at most 32 entries.
//
// The table holds the number of documents and, for each field, its name, whether it
// keeps positions, its number of terms, the documents that have it, the sum of its
// lengths, and the offset and size of each of its regions. The trailer (16 bytes) is the
// table's offset (8 bytes), the CRC-32C of every byte before the CRC (4 bytes) and
// "sgnd". Open checks the checksum and the table; every read after that checks its
// bounds, so a damaged segment gives an error that names its file (ErrDamaged), never a
// panic or a read outside the file.
package inverted

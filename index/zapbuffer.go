package index

import zapx "github.com/blevesearch/zapx/v17"

// Bleve's segment builder (zapx) sizes the buffer of each new segment in advance: the
// bytes per document of the last segment it built, times the new batch's documents plus
// one hundred. After a batch of a few pages of a megabyte of text each (2–3 MB of segment
// per document) that is hundreds of megabytes for the next batch, whatever it holds: a
// crawl of 10 MiB pages showed a 287 MB buffer (a heap profile of
// TestCrawlMemoryBoundedOnHugeBodies, whose peak RSS went from under 500 MiB to 600–800
// MiB in a third of its runs). The estimate is turned off: the buffer grows with what is
// written, which for an ordinary batch of 256 pages (a segment of a few megabytes) costs
// a few copies of it, next to the milliseconds of CPU per page the batch costs anyway.
func init() {
	zapx.NewSegmentBufferNumResultsFactor = 0 // multiplies the bytes per document (sic)
}

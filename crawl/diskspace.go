package crawl

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// spaceCheckEvery is how often a running crawl checks the free space of its data
// directory's file system (a statfs call: microseconds). A variable for tests.
var spaceCheckEvery = 2 * time.Second

// freeSpace returns the bytes available to an unprivileged writer on the file system
// holding dir.
func freeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// checkSpace returns an error when the data directory's file system has less free space
// than crawl.min-free-space.
func (c *Crawler) checkSpace() error {
	reserve := int64(c.cfg.Crawl.MinFreeSpace)
	if reserve <= 0 {
		return nil
	}
	free, err := c.freeSpace(c.cfg.Data)
	if err != nil {
		return fmt.Errorf("crawl: free space of %s: %w", c.cfg.Data, err)
	}
	if free < uint64(reserve) {
		return fmt.Errorf("crawl: only %s free on the file system of %s, less than crawl.min-free-space (%s): the crawl stopped before the disk fills; free space (or lower crawl.min-free-space) and run it again to resume",
			FormatBytes(int64(free)), c.cfg.Data, FormatBytes(reserve))
	}
	return nil
}

// watchSpace checks the free space every spaceCheckEvery until ctx ends, and stops the
// crawl (stop, with the reason, also kept as the crawl's storage failure) when it runs low.
func (c *Crawler) watchSpace(ctx context.Context, stop context.CancelCauseFunc) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(spaceCheckEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := c.checkSpace(); err != nil {
					c.failStorage(err)
					stop(err)
					return
				}
			}
		}
	}()
	return func() { <-done }
}

// failStorage records the first failure to store what the crawl fetched (a WARC write, a
// full disk). From then on no page is finished: its lease stays, and a resumed crawl
// fetches it again, so no page is ever recorded without its capture.
func (c *Crawler) failStorage(err error) {
	c.storageErr.CompareAndSwap(nil, &err)
}

// storageFailed returns the failure failStorage recorded, or nil.
func (c *Crawler) storageFailed() error {
	if p := c.storageErr.Load(); p != nil {
		return *p
	}
	return nil
}

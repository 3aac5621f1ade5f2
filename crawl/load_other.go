//go:build !linux

package crawl

// procLoad reads nothing outside Linux: renders are not governed there.
type procLoad struct{ c *Crawler }

func (procLoad) sample() loadSample { return loadSample{} }

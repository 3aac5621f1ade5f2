package config

import (
	"fmt"
	"time"
)

// Geo configures the geographic-data vertical (package geo/discover reads it).
type Geo struct {
	Enabled         bool     `yaml:"enabled"`
	MaxDatasetBytes ByteSize `yaml:"max-dataset-bytes"`
	MinPageHits     int      `yaml:"min-page-hits"`
	WindowWords     int      `yaml:"window-words"`
	// RecheckEvery is how old a dataset's last link check may grow before sonda serve
	// checks it again (0: never; sonda geo recheck does it on demand).
	RecheckEvery time.Duration `yaml:"recheck-every"`
}

func (c *Config) validateGeo(errs *[]string) {
	g := c.Geo
	if g.MaxDatasetBytes <= 0 {
		*errs = append(*errs, "geo.max-dataset-bytes: must be positive")
	}
	if g.MinPageHits < 1 {
		*errs = append(*errs, fmt.Sprintf("geo.min-page-hits: must be at least 1 (got %d)", g.MinPageHits))
	}
	if g.WindowWords < 0 {
		*errs = append(*errs, "geo.window-words: must not be negative")
	}
	if g.RecheckEvery < 0 {
		*errs = append(*errs, "geo.recheck-every: must not be negative (0 turns the check off)")
	}
}

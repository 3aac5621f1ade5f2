package config

import "fmt"

// Geo configures the geographic-data vertical (package geo/discover reads it).
type Geo struct {
	Enabled         bool     `yaml:"enabled"`
	MaxDatasetBytes ByteSize `yaml:"max-dataset-bytes"`
	MinPageHits     int      `yaml:"min-page-hits"`
	WindowWords     int      `yaml:"window-words"`
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
}

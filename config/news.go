package config

import (
	"fmt"
	"time"
)

// Feeds configures discovery through feeds and sitemaps (package feeds reads it).
type Feeds struct {
	Enabled     bool          `yaml:"enabled"`
	Interval    time.Duration `yaml:"interval"`
	MaxInterval time.Duration `yaml:"max-interval"`
	MaxPerHost  int           `yaml:"max-per-host"`
	MaxEntries  int           `yaml:"max-entries"`
	MaxSize     ByteSize      `yaml:"max-size"`
}

// News configures the news vertical's article records (package news reads it).
type News struct {
	Enabled bool   `yaml:"enabled"`
	Mode    string `yaml:"mode"`     // extraction mode: sonda, thesis or trafilatura
	Zone    string `yaml:"timezone"` // IANA zone of dates written without one
}

func (c *Config) validateNews(errs *[]string) {
	f := c.Feeds
	if f.MaxInterval < 0 || (f.Interval > 0 && f.MaxInterval > 0 && f.MaxInterval < f.Interval) {
		*errs = append(*errs, fmt.Sprintf("feeds.max-interval: %s is shorter than feeds.interval %s", f.MaxInterval, f.Interval))
	}
	if f.MaxPerHost < 0 || f.MaxEntries < 0 || f.MaxSize < 0 {
		*errs = append(*errs, "feeds.max-per-host, max-entries and max-size must not be negative")
	}
	switch c.News.Mode {
	case "", "sonda", "thesis", "trafilatura":
	default:
		*errs = append(*errs, fmt.Sprintf("news.mode: unknown mode %q (choose sonda, thesis or trafilatura)", c.News.Mode))
	}
	if z := c.News.Zone; z != "" {
		if _, err := time.LoadLocation(z); err != nil {
			*errs = append(*errs, fmt.Sprintf("news.timezone: %v (use an IANA name such as America/Sao_Paulo, or UTC)", err))
		}
	}
}

package config

import (
	"fmt"
	"strings"
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

// News configures the news vertical's article records and topic monitoring (package news
// reads it).
type News struct {
	Enabled        bool             `yaml:"enabled"`
	Mode           string           `yaml:"mode"`     // extraction mode: sonda, thesis or trafilatura
	Zone           string           `yaml:"timezone"` // IANA zone of dates written without one
	SourceInterval time.Duration    `yaml:"source-interval"`
	Search         []SearchProvider `yaml:"search"`
}

// SearchProvider is a results page the topic monitor may ask for sources (opt-in).
type SearchProvider struct {
	Name  string `yaml:"name"`
	URL   string `yaml:"url"`   // template with {query} and optionally {page}
	Links string `yaml:"links"` // CSS selector of the result links
	Pages int    `yaml:"pages"`
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
	for i, p := range c.News.Search {
		if !strings.Contains(p.URL, "{query}") || p.Links == "" || p.Name == "" {
			*errs = append(*errs, fmt.Sprintf("news.search[%d]: a provider needs a name, a url with {query} and a links selector", i))
		}
	}
	if z := c.News.Zone; z != "" {
		if _, err := time.LoadLocation(z); err != nil {
			*errs = append(*errs, fmt.Sprintf("news.timezone: %v (use an IANA name such as America/Sao_Paulo, or UTC)", err))
		}
	}
}

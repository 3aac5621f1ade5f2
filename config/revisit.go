package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Revisit configures incremental crawling: whether and when fetched pages are fetched
// again, and what counts as a change (package revisit reads it).
type Revisit struct {
	Policy      string        `yaml:"policy"`
	Budget      Rate          `yaml:"budget"`
	Share       float64       `yaml:"share"`
	Interval    time.Duration `yaml:"interval"`
	MinInterval time.Duration `yaml:"min-interval"`
	MaxInterval time.Duration `yaml:"max-interval"`
	Weight      string        `yaml:"weight"`
	Ignore      []string      `yaml:"ignore"`
	Fingerprint string        `yaml:"fingerprint"`

	ClassPeriods []time.Duration `yaml:"class-periods"`
	ClassWindows []int           `yaml:"class-windows"`
	ClassUpper   float64         `yaml:"class-upper"`
	ClassLower   float64         `yaml:"class-lower"`
	ClassModel   string          `yaml:"class-model"`

	AdaptiveInc      float64       `yaml:"adaptive-inc"`
	AdaptiveDec      float64       `yaml:"adaptive-dec"`
	AdaptiveSyncRate float64       `yaml:"adaptive-sync-rate"`
	ProportionalUnit time.Duration `yaml:"proportional-unit"`
}

// RevisitBudget is the revisit fetches per second a revisit policy plans for:
// revisit.budget when set, otherwise revisit.share of crawl.budget (0: none).
func (c *Config) RevisitBudget() float64 {
	if c.Revisit.Budget > 0 {
		return c.Revisit.Budget.PerSecond()
	}
	return c.Revisit.Share * c.Crawl.Budget.PerSecond()
}

// validateRevisit adds the revisit section's problems to errs. The policy names are
// checked by package revisit, which owns them.
func (c *Config) validateRevisit(errs *[]string) {
	r := c.Revisit
	add := func(format string, args ...any) { *errs = append(*errs, fmt.Sprintf(format, args...)) }
	if r.Share < 0 || r.Share > 1 {
		add("revisit.share: must be between 0 and 1 (got %v)", r.Share)
	}
	if r.MinInterval < 0 || r.MaxInterval < 0 || r.Interval < 0 {
		add("revisit intervals must not be negative")
	}
	if r.MaxInterval > 0 && r.MaxInterval < r.MinInterval {
		add("revisit.max-interval (%v) must be at least revisit.min-interval (%v)", r.MaxInterval, r.MinInterval)
	}
	switch r.Weight {
	case "", "none", "relevance":
	default:
		add("revisit.weight: %q is not none or relevance", r.Weight)
	}
	switch r.Fingerprint {
	case "", "text", "md5":
	default:
		add("revisit.fingerprint: %q is not text or md5", r.Fingerprint)
	}
	if len(r.ClassPeriods) != len(r.ClassWindows) {
		add("revisit.class-periods (%d) and revisit.class-windows (%d) need one entry per class", len(r.ClassPeriods), len(r.ClassWindows))
	}
}

// setList parses a comma-separated environment value into a []time.Duration or []int.
func setList(f reflect.Value, s string) error {
	var parts []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	switch f.Interface().(type) {
	case []time.Duration:
		out := make([]time.Duration, len(parts))
		for i, p := range parts {
			d, err := time.ParseDuration(p)
			if err != nil {
				return fmt.Errorf("want durations like 24h,72h: %w", err)
			}
			out[i] = d
		}
		f.Set(reflect.ValueOf(out))
	case []int:
		out := make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("want whole numbers like 3,2,2,1")
			}
			out[i] = n
		}
		f.Set(reflect.ValueOf(out))
	}
	return nil
}

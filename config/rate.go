package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Rate is a number of events per second that YAML and the environment may write per unit:
// 10/s, 600/min, 5000/h, 90000/d, or a plain number per second. 0 means no limit.
type Rate float64

// ParseRate parses rates like 10/s, 2.5/min, 90000/d or 12.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	num, unit, hasUnit := strings.Cut(s, "/")
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("rate %q: want a non-negative number per unit, like 10/s, 600/min or 90000/d", s)
	}
	if !hasUnit {
		return Rate(x), nil
	}
	seconds := map[string]float64{"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
	per, ok := seconds[strings.ToLower(strings.TrimSpace(unit))]
	if !ok {
		return 0, fmt.Errorf("rate %q: unknown unit %q (use s, min, h or d)", s, unit)
	}
	return Rate(x / per), nil
}

// UnmarshalYAML accepts a number (per second) or a string with a unit.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseRate(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*r = v
	return nil
}

// MarshalYAML writes the rate per second.
func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }

// String writes the rate per second, e.g. 10/s.
func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s" }

// PerSecond is the rate as a plain number.
func (r Rate) PerSecond() float64 { return float64(r) }

package config

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{{"10/s", 10}, {"600/min", 10}, {"7200/h", 2}, {"86400/d", 1}, {"2.5", 2.5}, {"0", 0}, {" 3 / s ", 3}}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || math.Abs(float64(got)-tt.want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "fast", "-1/s", "10/fortnight", "inf", "NaN/s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	if s := Rate(10).String(); s != "10/s" {
		t.Errorf("String() = %q", s)
	}
}

func TestRateFromEnvAndYAML(t *testing.T) {
	c := Default()
	if err := ApplyEnv(&c, []string{"SONDA_CRAWL_BUDGET=600/min", "SONDA_REVISIT_POLICY=optimal"}); err != nil {
		t.Fatal(err)
	}
	if c.Crawl.Budget != 10 || c.Revisit.Policy != "optimal" {
		t.Errorf("budget %v, policy %q", c.Crawl.Budget, c.Revisit.Policy)
	}
	if err := ApplyEnv(&c, []string{"SONDA_REVISIT_CLASS_PERIODS=1h,2h", "SONDA_REVISIT_CLASS_WINDOWS=2,1"}); err != nil {
		t.Fatal(err)
	}
	if len(c.Revisit.ClassPeriods) != 2 || c.Revisit.ClassPeriods[1].Hours() != 2 || c.Revisit.ClassWindows[0] != 2 {
		t.Errorf("class periods %v, windows %v", c.Revisit.ClassPeriods, c.Revisit.ClassWindows)
	}
	if err := ApplyEnv(&c, []string{"SONDA_CRAWL_BUDGET=lots"}); err == nil {
		t.Error("a bad rate was accepted")
	}
}

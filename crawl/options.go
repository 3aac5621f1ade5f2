package crawl

import (
	"fmt"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/scope"
	"github.com/sonda-search/sonda/urlnorm"
)

// The functions below translate the user's configuration into each component's options.
// They are exported so that commands which judge URLs without crawling (`sonda check`)
// judge them exactly as the crawler does.

// NormalizerOptions are the URL normalization settings of cfg.
func NormalizerOptions(cfg config.Config) urlnorm.Options {
	return urlnorm.Options{StripParams: cfg.URLs.StripParams, KeepFragment: cfg.URLs.KeepFragment, SortQuery: cfg.URLs.SortQuery}
}

// ScopeRules are the scope settings of cfg.
func ScopeRules(cfg config.Config) scope.Rules {
	s := cfg.Scope
	follow := s.Follow
	if follow == "seeds" { // the name --scope teaches for "host"
		follow = scope.FollowHost
	}
	return scope.Rules{
		Follow:              follow,
		AllowHosts:          s.AllowHosts,
		DenyHosts:           s.DenyHosts,
		AllowDomains:        s.AllowDomains,
		DenyDomains:         s.DenyDomains,
		Allow:               s.Allow,
		Deny:                s.Deny,
		MaxDepth:            s.MaxDepth,
		MaxPagesPerHost:     int(s.MaxPagesPerHost),
		MaxURLLength:        s.MaxURLLength,
		MaxPathSegments:     s.MaxPathSegments,
		MaxRepeatedSegments: s.MaxRepeatedSegments,
		MaxQueryVariants:    s.MaxQueryVariants,
	}
}

// FetchOptions are the HTTP settings of cfg.
func FetchOptions(cfg config.Config) (fetch.Options, error) {
	f := cfg.Fetch
	o := fetch.Options{
		UserAgent:        f.UserAgent,
		ConnectTimeout:   f.ConnectTimeout,
		TLSTimeout:       f.TLSTimeout,
		FirstByteTimeout: f.FirstByteTimeout,
		BodyTimeout:      f.BodyTimeout,
		Timeout:          f.Timeout,
		MaxBodyBytes:     int64(f.MaxBody),
		AcceptTypes:      f.AcceptTypes,
		AllowPrivate:     f.AllowPrivate,
		AllowPrivateTo:   f.AllowPrivateTo,
	}
	for _, r := range f.Resolve {
		m, err := fetch.ParseMapping(r)
		if err != nil {
			return o, fmt.Errorf("fetch.resolve: %w", err)
		}
		o.Resolve = append(o.Resolve, m)
	}
	return o, nil
}

// RobotsPolicy is the robots.txt caching and retry policy of cfg.
func RobotsPolicy(cfg config.Config) robots.Policy {
	return robots.Policy{TTL: cfg.Robots.CacheTTL, RetryMin: cfg.Robots.RetryDelay, MaxFailures: cfg.Robots.MaxFailures}
}

// RobotsAllowed is the crawler's robots.txt decision for a URL. `sonda check robots` calls
// it too, so the command and the crawler cannot disagree.
func RobotsAllowed(r *robots.Robots, agent string, u urlnorm.URL) bool {
	return r.Allowed(agent, u.PathQuery())
}

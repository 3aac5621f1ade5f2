package crawl

import (
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/robots"
)

// The politeness rules below are the crawler's, exported so that components which ask a
// host for something outside the frontier (the news vertical's results-page providers)
// rest, retry and back off exactly as the crawler does, from the same politeness settings.

// HostDelay is how long a host rests after a request: the largest of its robots.txt
// crawl-delay (group's, for our agent), politeness.min-delay and politeness.delay-factor ×
// the response time of res, the last two capped by politeness.max-delay. A robots.txt
// crawl-delay is honoured in full. res may be nil (no response time known); a zero group
// (robots.txt not read yet) has no crawl-delay.
func HostDelay(p config.Politeness, group robots.Group, res *fetch.Result) time.Duration {
	d := p.MinDelay
	if res != nil && p.DelayFactor > 0 {
		d = max(d, time.Duration(p.DelayFactor*float64(responseTime(res))))
	}
	d = min(d, p.MaxDelay)
	if cd, ok := group.CrawlDelay(); ok {
		d = max(d, cd)
	}
	return d
}

// responseTime is how long the server took over res, the measure of its load. A body cut
// by fetch.body-timeout or fetch.timeout tells nothing of the server's speed, only that the
// body is long (an endless stream answers fast and forever), so such a response counts up
// to its first byte. Time spent waiting for memory for a large body (fetch.large-body-memory)
// is this machine's, not the server's: with it counted, a wait of seconds kept the host
// waiting twice as long again.
func responseTime(res *fetch.Result) time.Duration {
	if res.Truncated == fetch.TruncatedTime {
		t := res.Timing
		return t.DNS + t.Connect + t.TLS + t.FirstByte
	}
	return res.Timing.Total - res.Timing.Waited
}

// RetryWait is when a request that failed in a retryable way (see Retryable) is tried
// again after attempts earlier retries: politeness.retry-delay doubled per earlier attempt,
// or the server's Retry-After when longer (at most a day). ok is false when
// politeness.max-retries attempts are used up.
func RetryWait(p config.Politeness, attempts int, res *fetch.Result) (wait time.Duration, ok bool) {
	if attempts >= p.MaxRetries {
		return 0, false
	}
	wait = p.RetryDelay << attempts
	if res != nil && res.RetryAfter > wait {
		wait = min(res.RetryAfter, 24*time.Hour)
	}
	return wait, true
}

// RetryAfterHold is how long the whole host is left alone after res asked for a pause with
// Retry-After (on 429 or 503): the header's value, at most ten times politeness.max-delay
// so a hostile header cannot park a host for ever. Zero when res set no Retry-After.
func RetryAfterHold(p config.Politeness, res *fetch.Result) time.Duration {
	if res == nil || res.RetryAfter <= 0 {
		return 0
	}
	return min(res.RetryAfter, p.MaxDelay*10)
}

// Retryable says whether the crawler would try res's request again later: a server error
// (5xx), 429 Too Many Requests, or a network failure that may pass (DNS, refused or reset
// connection, a timeout, a body that broke off).
func Retryable(res *fetch.Result) bool {
	if res == nil {
		return false
	}
	if res.Err != nil {
		return retryable(fetch.KindOf(res.Err))
	}
	return res.Status == 429 || res.Status >= 500
}

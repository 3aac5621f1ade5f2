package crawl

import (
	"errors"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/robots"
)

func TestHostDelay(t *testing.T) {
	p := config.Politeness{MinDelay: time.Second, DelayFactor: 2, MaxDelay: 10 * time.Second}
	slow := &fetch.Result{Timing: fetch.Timing{Total: 3 * time.Second}}
	verySlow := &fetch.Result{Timing: fetch.Timing{Total: time.Minute}}
	withDelay := robots.Parse([]byte("User-agent: *\nCrawl-delay: 30\n")).Group("sonda")
	withSmallDelay := robots.Parse([]byte("User-agent: *\nCrawl-delay: 0.5\n")).Group("sonda")
	for _, c := range []struct {
		name  string
		group robots.Group
		res   *fetch.Result
		want  time.Duration
	}{
		{"min-delay without a response", robots.Group{}, nil, time.Second},
		{"delay-factor × response time", robots.Group{}, slow, 6 * time.Second},
		{"capped by max-delay", robots.Group{}, verySlow, 10 * time.Second},
		{"a body cut by time counts to its first byte", robots.Group{}, &fetch.Result{Truncated: fetch.TruncatedTime,
			Timing: fetch.Timing{Connect: time.Second, FirstByte: 2 * time.Second, Total: time.Minute}}, 6 * time.Second},
		{"waiting for memory is not the server's time", robots.Group{}, &fetch.Result{Timing: fetch.Timing{Total: 23 * time.Second, Waited: 20 * time.Second}}, 6 * time.Second},
		{"crawl-delay in full, past max-delay", withDelay, slow, 30 * time.Second},
		{"a shorter crawl-delay does not shorten min-delay", withSmallDelay, nil, time.Second},
	} {
		if got := HostDelay(p, c.group, c.res); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRetryWait(t *testing.T) {
	p := config.Politeness{MaxRetries: 2, RetryDelay: 30 * time.Second, MaxDelay: time.Minute}
	for _, c := range []struct {
		attempts int
		res      *fetch.Result
		want     time.Duration
		ok       bool
	}{
		{0, &fetch.Result{Status: 503}, 30 * time.Second, true},
		{1, &fetch.Result{Status: 503}, time.Minute, true},
		{0, &fetch.Result{Status: 429, RetryAfter: 2 * time.Minute}, 2 * time.Minute, true},
		{0, &fetch.Result{Status: 429, RetryAfter: 72 * time.Hour}, 24 * time.Hour, true},
		{2, &fetch.Result{Status: 503}, 0, false},
	} {
		got, ok := RetryWait(p, c.attempts, c.res)
		if got != c.want || ok != c.ok {
			t.Errorf("attempt %d %+v: %v %v, want %v %v", c.attempts, c.res, got, ok, c.want, c.ok)
		}
	}
	if h := RetryAfterHold(p, &fetch.Result{Status: 429, RetryAfter: time.Hour}); h != 10*time.Minute {
		t.Errorf("hold %v, want ten times max-delay", h)
	}
	if h := RetryAfterHold(p, &fetch.Result{Status: 429}); h != 0 {
		t.Errorf("hold without Retry-After %v", h)
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		res  *fetch.Result
		want bool
	}{
		{&fetch.Result{Status: 429}, true},
		{&fetch.Result{Status: 503}, true},
		{&fetch.Result{Status: 404}, false},
		{&fetch.Result{Status: 200}, false},
		{&fetch.Result{Err: &fetch.Error{Kind: fetch.KindRefused, URL: "http://a.example/", Err: errors.New("refused")}}, true},
		{&fetch.Result{Err: &fetch.Error{Kind: fetch.KindTooManyRedirects, URL: "http://a.example/", Err: errors.New("hops")}}, false},
		{&fetch.Result{Err: errors.New("not a fetch error")}, false},
		{nil, false},
	} {
		if got := Retryable(c.res); got != c.want {
			t.Errorf("%+v: %v", c.res, got)
		}
	}
}

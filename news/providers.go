package news

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/sonda-search/sonda/feeds"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/store"
)

// SearchProvider finds candidate sources for a topic: pages, sites, feeds or sitemaps to
// crawl. The thesis had one, Google News's first results page, scraped with robots.txt
// switched off; sonda takes any number, each replaceable.
type SearchProvider interface {
	Name() string
	Sources(ctx context.Context, t Topic) ([]Source, error)
}

// Source is one address a provider proposes, with its rank in the provider's answer.
type Source struct {
	URL      string `json:"url"`
	Provider string `json:"provider"`
	Rank     int    `json:"rank"` // 1 for the first result
}

// SitesProvider proposes the sites the reader gave with the topic.
type SitesProvider struct{}

// Name implements SearchProvider.
func (SitesProvider) Name() string { return "sites" }

// Sources implements SearchProvider.
func (SitesProvider) Sources(_ context.Context, t Topic) ([]Source, error) {
	out := make([]Source, 0, len(t.Sites))
	for i, s := range t.Sites {
		out = append(out, Source{URL: s, Provider: "sites", Rank: i + 1})
	}
	return out, nil
}

// FeedsProvider proposes the feeds and sitemaps the crawl already knows (package feeds'
// registry in the crawl database DB) on the topic's sites, or all of them for a topic
// without sites: reading them again finds the sources' newest articles first.
type FeedsProvider struct {
	DB *store.DB
}

// Name implements SearchProvider.
func (FeedsProvider) Name() string { return "feeds" }

// Sources implements SearchProvider.
func (p FeedsProvider) Sources(_ context.Context, t Topic) ([]Source, error) {
	if p.DB == nil {
		return nil, errors.New("news: the feeds provider has no database")
	}
	reg, err := feeds.OpenRegistry(p.DB) // read afresh: crawls register feeds as they go
	if err != nil {
		return nil, err
	}
	hosts := map[string]bool{}
	for _, s := range t.Sites {
		if u, err := url.Parse(s); err == nil {
			hosts[strings.ToLower(u.Host)] = true
		}
	}
	var out []Source
	for _, s := range reg.Sources() {
		u, err := url.Parse(s.URL)
		if err != nil || (len(hosts) > 0 && !hosts[strings.ToLower(u.Host)]) || s.Error != "" {
			continue
		}
		out = append(out, Source{URL: s.URL, Provider: "feeds", Rank: len(out) + 1})
	}
	return out, nil
}

// TemplateProvider asks a search engine or a site's own search page: it fetches the results
// pages named by URLTemplate ({query} is the topic's words, properly query-escaped; {page}
// the page number from 1) and takes the links that LinkSelector (CSS) picks. It is opt-in,
// it obeys the search site's robots.txt (the thesis turned robots.txt off to scrape Google),
// it reads at most Pages results pages (default 1, as the thesis did), and it is paced like
// the crawl (Pacer): one request at a time to the site, the crawl's rest between two, and a
// 429 or 5xx retried as the crawl retries it, after Retry-After when the site sends one.
type TemplateProvider struct {
	Label        string // name of the provider, e.g. "bing-news"
	URLTemplate  string // e.g. "https://search.example/news?q={query}&page={page}"
	LinkSelector string // e.g. "article h3 a"
	Pages        int
	Agent        string         // robots.txt product token (default "sonda")
	Fetcher      *fetch.Fetcher // default: one made from FetchOptions for each call
	// FetchOptions are the HTTP settings of the fetcher made when Fetcher is nil: the
	// crawl's (crawl.FetchOptions), so the results page is asked with the crawl's user
	// agent, timeouts and address rules.
	FetchOptions fetch.Options
	// Pacer spaces the requests under the crawl's politeness settings (default: one shared
	// pacer under the default settings). Give every provider of a process the same one.
	Pacer *HostPacer
}

// Name implements SearchProvider.
func (p *TemplateProvider) Name() string {
	if p.Label != "" {
		return p.Label
	}
	return "template"
}

// Sources implements SearchProvider.
func (p *TemplateProvider) Sources(ctx context.Context, t Topic) ([]Source, error) {
	if !strings.Contains(p.URLTemplate, "{query}") || p.LinkSelector == "" {
		return nil, fmt.Errorf("news: provider %s needs a URL template with {query} and a link selector", p.Name())
	}
	sel, err := cascadia.Compile(p.LinkSelector)
	if err != nil {
		return nil, fmt.Errorf("news: provider %s: link selector %q: %w", p.Name(), p.LinkSelector, err)
	}
	f := p.Fetcher
	if f == nil {
		if f, err = fetch.New(p.FetchOptions); err != nil {
			return nil, err
		}
		defer f.Close()
	}
	agent := p.Agent
	if agent == "" {
		agent = "sonda"
	}
	query := strings.Join(t.Terms, " ")
	if strings.TrimSpace(query) == "" {
		query = t.Name
	}
	pacer := p.Pacer
	if pacer == nil {
		pacer = defaultPacer()
	}
	var out []Source
	seen := map[string]bool{}
	var rules *robots.Robots
	var group robots.Group // rules' group for agent: its Crawl-delay paces the host
	rulesGroup := func(*fetch.Result) robots.Group { return group }
	for page := 1; page <= max(p.Pages, 1); page++ {
		target := strings.NewReplacer("{query}", url.QueryEscape(query), "{page}", strconv.Itoa(page)).Replace(p.URLTemplate)
		u, err := url.Parse(target)
		if err != nil || !u.IsAbs() {
			return out, fmt.Errorf("news: provider %s: %q is not an absolute URL", p.Name(), target)
		}
		if rules == nil {
			req := fetch.Request{URL: u.Scheme + "://" + u.Host + "/robots.txt", AnyType: true, MaxBodyBytes: robots.MaxSize + 1}
			_, err := pacer.fetch(ctx, f, u.Host, req, func(res *fetch.Result) robots.Group {
				rules = robots.FromFetch(robots.Response{Status: res.Status, Body: res.Body, Err: res.Err}, time.Now(), nil, robots.Policy{}).Rules()
				group = rules.Group(agent)
				return group // the rest after robots.txt already honours its Crawl-delay
			})
			if err != nil {
				return out, fmt.Errorf("news: provider %s: robots.txt: %w", p.Name(), err)
			}
		}
		if !rules.Allowed(agent, robots.PathQuery(u)) {
			return out, fmt.Errorf("news: provider %s: robots.txt of %s disallows %s for %s", p.Name(), u.Host, u.RequestURI(), agent)
		}
		var res *fetch.Result
		for attempt := 0; ; attempt++ {
			if res, err = pacer.fetch(ctx, f, u.Host, fetch.Request{URL: target}, rulesGroup); err != nil {
				return out, fmt.Errorf("news: provider %s: %w", p.Name(), err)
			}
			wait, retry := pacer.retryWait(attempt, res)
			if !retry || ctx.Err() != nil {
				break
			}
			if err := sleep(ctx, wait, u.Host); err != nil {
				return out, fmt.Errorf("news: provider %s: %s answered %s; not retried: %w", p.Name(), target, answer(res), err)
			}
		}
		if res.Err != nil {
			return out, fmt.Errorf("news: provider %s: %w", p.Name(), res.Err)
		}
		if res.Status != 200 {
			return out, fmt.Errorf("news: provider %s: %s answered %s", p.Name(), target, answer(res))
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.UTF8))
		if err != nil {
			return out, fmt.Errorf("news: provider %s: %w", p.Name(), err)
		}
		doc.FindMatcher(sel).Each(func(_ int, s *goquery.Selection) {
			href, ok := s.Attr("href")
			if !ok {
				return
			}
			ref, err := url.Parse(strings.TrimSpace(href))
			if err != nil {
				return
			}
			abs := u.ResolveReference(ref)
			if (abs.Scheme != "http" && abs.Scheme != "https") || seen[abs.String()] {
				return
			}
			seen[abs.String()] = true
			out = append(out, Source{URL: abs.String(), Provider: p.Name(), Rank: len(out) + 1})
		})
	}
	return out, nil
}

// answer describes a response for an error message: its status, and the Retry-After it set.
func answer(res *fetch.Result) string {
	if res.Err != nil {
		return res.Err.Error()
	}
	if res.RetryAfter > 0 {
		return fmt.Sprintf("%d (Retry-After %s)", res.Status, res.RetryAfter)
	}
	return strconv.Itoa(res.Status)
}

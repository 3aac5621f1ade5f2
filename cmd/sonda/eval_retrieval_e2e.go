package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sonda-search/sonda/index/ireval"
)

// endToEnd is the Cranfield run through the path a user's query takes: the collection
// served as a website (ireval.Site) on loopback, crawled by `sonda crawl`, served by
// `sonda serve`, each question sent to GET /api/search as typed (the configured implicit
// operator, default per_page) and the ranking read deeper with per_page=100.
type endToEnd struct {
	name      string
	ranking   map[int][]string // query number → abstract IDs, best first
	latencies []time.Duration  // of the first-page request of each query
	pages     int              // abstracts the crawl indexed
}

// e2eVariant is one way of serving the crawled data: a name and its settings.
type e2eVariant struct {
	name string
	env  []string
}

// runEndToEnd crawls the site (in template, see ireval.Site) once into a temporary data folder and serves it once per
// variant. env is added to every process's environment.
func runEndToEnd(ctx context.Context, c *ireval.Collection, template string, env []string, variants []e2eVariant, log io.Writer) ([]*endToEnd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("end-to-end: find the sonda binary: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("end-to-end: serve the Cranfield site: %w", err)
	}
	handler := ireval.NewSite(c)
	handler.Template = template
	site := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go site.Serve(ln)
	defer site.Close()
	tmp, err := os.MkdirTemp("", "sonda-cranfield-e2e-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data")
	// search.time-budget 0: quality is scored on complete answers. With the serving
	// default (50 ms) a busy machine would cut answers short and lower the figures for a
	// reason that has nothing to do with ranking; latency is reported on its own.
	procEnv := append(append(os.Environ(), "SONDA_LOG_LEVEL=warn", "SONDA_SEARCH_TIME_BUDGET=0"), env...)

	start := time.Now()
	crawl := exec.CommandContext(ctx, exe, "crawl", "--data", data, "--allow-private", "--min-delay", "0",
		"--resolve", "cranfield.test="+ln.Addr().String(), "--seed", "http://cranfield.test/")
	crawl.Env = procEnv
	if out, err := crawl.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("end-to-end: sonda crawl: %w\n%s", err, out)
	}
	fmt.Fprintf(log, "crawled the Cranfield site in %s\n", time.Since(start).Round(time.Second))
	var out []*endToEnd
	for _, v := range variants {
		e, err := serveAndAsk(ctx, exe, data, append(slices.Clone(procEnv), v.env...), c)
		if err != nil {
			return nil, err
		}
		e.name = v.name
		out = append(out, e)
	}
	return out, nil
}

// serveAndAsk starts `sonda serve` on data, asks every judged question and stops it.
func serveAndAsk(ctx context.Context, exe, data string, env []string, c *ireval.Collection) (*endToEnd, error) {
	addrLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := addrLn.Addr().String()
	addrLn.Close()
	serve := exec.CommandContext(ctx, exe, "serve", "--data", data, "--addr", addr)
	serve.Env = env
	var serveOut strings.Builder
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		return nil, fmt.Errorf("end-to-end: sonda serve: %w", err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	base := "http://" + addr
	client := &http.Client{Timeout: 30 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := client.Get(base + "/api/search?q=wing")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("end-to-end: sonda serve did not answer within 60 s: %v\n%s", err, serveOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	e := &endToEnd{ranking: map[int][]string{}}
	for _, q := range c.Queries {
		if len(c.Grades[q.Num]) == 0 {
			continue
		}
		t0 := time.Now()
		first, err := e2eSearch(client, base, q.Text, "")
		if err != nil {
			return nil, fmt.Errorf("end-to-end: query %d: %w", q.Num, err)
		}
		e.latencies = append(e.latencies, time.Since(t0))
		if first.Total == 0 {
			continue
		}
		var ids []string
		for page := 1; len(ids) < ireval.Depth; page++ {
			r, err := e2eSearch(client, base, q.Text, fmt.Sprintf("&per_page=100&page=%d", page))
			if err != nil {
				return nil, fmt.Errorf("end-to-end: query %d page %d: %w", q.Num, page, err)
			}
			for _, h := range r.Hits {
				if id, ok := ireval.DocOf(h.URL); ok {
					ids = append(ids, id)
				}
			}
			if len(r.Hits) < 100 || page >= r.Pages {
				break
			}
		}
		e.ranking[q.Num] = ids
	}
	if pages, err := e2eSearch(client, base, "site:cranfield.test", "&per_page=1"); err == nil {
		e.pages = int(pages.Total)
	}
	return e, nil
}

type e2eAnswer struct {
	Total uint64 `json:"total"`
	Pages int    `json:"pages"`
	Hits  []struct {
		URL string `json:"url"`
	} `json:"hits"`
}

func e2eSearch(client *http.Client, base, q, extra string) (*e2eAnswer, error) {
	res, err := client.Get(base + "/api/search?q=" + url.QueryEscape(q) + extra)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode == http.StatusBadRequest {
		return &e2eAnswer{}, nil // a question the parser refuses: no results, as the user sees
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/search: %s: %s", res.Status, body)
	}
	var r e2eAnswer
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("GET /api/search: %w", err)
	}
	return &r, nil
}

// percentile is the p-th percentile (0..1) of ds by the nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

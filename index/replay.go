package index

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
	"github.com/sonda-search/sonda/warc"
)

// ReplayOptions tune Replay.
type ReplayOptions struct {
	// Normalizer resolves links as the crawl did (crawl.NormalizerOptions of its config).
	Normalizer *urlnorm.Normalizer
	// RobotsAgent is the crawl's robots.agent, for page-level robots meta tags.
	RobotsAgent string
	// Since, when set, replays only pages fetched at or after it (catching up after a crash).
	Since time.Time
	// URLs, when not nil, are the only pages replayed (the entries of the index's Queue),
	// instead of every page record; URLs without a record are skipped.
	URLs []string
	// Progress, when set, is called now and then with the pages replayed and the total.
	Progress func(done, total int)
	// Analyzers run on every replayed document before the sinks, in order, as the crawl
	// runs its analyzers: they give it the results the live crawl gave it (an article
	// page's news.Article, which makes it kind article). Give analyzers that restore
	// results from the records the crawl stored (news.Restorer): what an analyzer commits
	// with Document.CommitWith is not written. An error leaves the document as it is.
	Analyzers []crawl.Analyzer
}

// ReplayStats counts what Replay did.
type ReplayStats struct {
	Pages    int // page records in the store
	Replayed int // documents given to the sinks
	Missing  int // records whose WARC capture could not be read (the document is skipped)
}

// Replay gives sinks every page the store has a record of, rebuilt as the crawl saw it
// from the latest capture in the WARC files under warcDir: the record, the decoded body,
// the parsed page and its text. It is how the search index and the link graph are rebuilt
// (`sonda index rebuild`) or caught up after a crash: the store and the WARC files are the
// source of truth, the index and the graph can always be made again from them. Pages
// without a capture (errors, redirects, robots exclusions) are replayed as records alone,
// so sinks see removals too.
func Replay(ctx context.Context, db *store.DB, warcDir string, sinks []crawl.Sink, opts ReplayOptions) (ReplayStats, error) {
	if opts.Normalizer == nil {
		opts.Normalizer = urlnorm.New(urlnorm.DefaultOptions())
	}
	type ref struct {
		url  string
		file string
		off  int64
	}
	var refs []ref
	add := func(p *store.Page) error {
		if !opts.Since.IsZero() && p.FetchedAt.Before(opts.Since) {
			return nil
		}
		r := ref{url: p.URL, off: -1}
		if file, off, ok := strings.Cut(p.WARC, "#"); ok {
			if n, err := strconv.ParseInt(off, 10, 64); err == nil {
				r.file, r.off = file, n
			}
		}
		refs = append(refs, r)
		return ctx.Err()
	}
	var err error
	if opts.URLs == nil {
		err = db.Pages(add)
	} else {
		seen := make(map[urlnorm.Key]bool, len(opts.URLs))
		for _, raw := range opts.URLs {
			u, perr := opts.Normalizer.Parse(raw)
			if perr != nil || seen[u.Key()] {
				continue
			}
			seen[u.Key()] = true
			p, ok, perr := db.Page(u.Key())
			if perr != nil {
				return ReplayStats{}, perr
			}
			if ok {
				if err = add(p); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return ReplayStats{}, err
	}
	// Read each WARC file front to back.
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].file != refs[j].file {
			return refs[i].file < refs[j].file
		}
		return refs[i].off < refs[j].off
	})
	stats := ReplayStats{Pages: len(refs)}
	docs := make(chan *crawl.Document, 64)
	var replayed, missing atomic.Int64
	var wg sync.WaitGroup
	var sinkErr atomic.Pointer[error]
	for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range docs {
				if d.Fetch != nil && d.Fetch.UTF8 != nil {
					parsePage(d, opts)
				}
				for _, a := range opts.Analyzers {
					_ = a.Analyze(ctx, d) // like the crawl: an analyzer's failure does not drop the page
				}
				for _, s := range sinks {
					if err := s.Consume(ctx, d); err != nil {
						e := fmt.Errorf("index: replay %s into %s: %w", d.Record.URL, s.Name(), err)
						sinkErr.CompareAndSwap(nil, &e)
					}
				}
				if n := replayed.Add(1); opts.Progress != nil && n%1000 == 0 {
					opts.Progress(int(n), len(refs))
				}
			}
		}()
	}
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var readErr error
	for _, r := range refs {
		if ctx.Err() != nil || sinkErr.Load() != nil {
			break
		}
		u, err := opts.Normalizer.Parse(r.url)
		if err != nil {
			continue
		}
		rec, ok, err := db.Page(u.Key())
		if err != nil {
			readErr = err
			break
		}
		if !ok {
			continue
		}
		d := &crawl.Document{URL: u, Record: rec}
		if rec.Status != 0 {
			d.Fetch = &fetch.Result{URL: rec.URL, Status: rec.Status, MediaType: rec.ContentType}
		}
		if r.off >= 0 && rec.Status >= 200 && rec.Status < 300 {
			res, err := readCapture(warcDir, files, r.file, r.off)
			if err != nil {
				missing.Add(1)
				continue
			}
			res.URL, res.Status = rec.URL, rec.Status
			d.Fetch = res
			if rec.Rendered && rec.RenderedWARC != "" {
				// The page was read from the DOM a browser built (render.mode): so is its
				// replay, from the conversion record written next to the response.
				if html, err := readRendered(warcDir, files, rec.RenderedWARC); err == nil {
					rendered := *res
					rendered.Body, rendered.UTF8, rendered.Charset = html, html, "utf-8"
					d.Fetch = &rendered
				}
			}
		}
		docs <- d
	}
	close(docs)
	wg.Wait()
	stats.Replayed, stats.Missing = int(replayed.Load()), int(missing.Load())
	if opts.Progress != nil {
		opts.Progress(stats.Replayed, len(refs))
	}
	if e := sinkErr.Load(); e != nil {
		return stats, *e
	}
	if readErr != nil {
		return stats, readErr
	}
	return stats, ctx.Err()
}

// readCapture reads the response record at off in file and decodes it as the fetcher did.
func readCapture(dir string, files map[string]*os.File, file string, off int64) (*fetch.Result, error) {
	rec, err := readRecord(dir, files, file, off, warc.TypeResponse)
	if err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Content)), nil)
	if err != nil {
		return nil, fmt.Errorf("index: WARC %s at %d: HTTP response: %w", file, off, err)
	}
	resp.Body.Close()
	return fetch.Decode(resp.Header, rec.Payload(), 0), nil
}

// readRendered reads the rendered DOM of a page from its conversion record at loc
// ("file#offset", store.Page.RenderedWARC).
func readRendered(dir string, files map[string]*os.File, loc string) ([]byte, error) {
	file, o, _ := strings.Cut(loc, "#")
	off, err := strconv.ParseInt(o, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("index: rendered WARC location %q: %w", loc, err)
	}
	rec, err := readRecord(dir, files, file, off, warc.TypeConversion)
	if err != nil {
		return nil, err
	}
	return rec.Content, nil
}

// readRecord reads the record of type typ at off in file.
func readRecord(dir string, files map[string]*os.File, file string, off int64, typ string) (*warc.Record, error) {
	if file == "" || file != filepath.Base(file) {
		return nil, fmt.Errorf("index: WARC location %q is not a plain file name", file)
	}
	f := files[file]
	if f == nil {
		var err error
		f, err = os.Open(filepath.Join(dir, file))
		if errors.Is(err, os.ErrNotExist) {
			f, err = os.Open(filepath.Join(dir, file+".open"))
		}
		if err != nil {
			return nil, err
		}
		files[file] = f
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := warc.NewReader(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, err
	}
	rec, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("index: WARC %s at %d: %w", file, off, err)
	}
	if rec.Type() != typ {
		return nil, fmt.Errorf("index: WARC %s at %d is a %s record, not a %s", file, off, rec.Type(), typ)
	}
	return rec, nil
}

// parsePage fills a replayed document's page and text as the crawler does.
func parsePage(d *crawl.Document, opts ReplayOptions) {
	res := d.Fetch
	if res.MediaType != "text/html" && res.MediaType != "application/xhtml+xml" {
		d.Text = string(res.UTF8)
		return
	}
	names := []string{}
	if opts.RobotsAgent != "" {
		names = append(names, opts.RobotsAgent)
	}
	page, err := parse.Parse(res.UTF8, d.Record.URL, parse.Options{Resolver: opts.Normalizer, RobotsNames: names})
	if err != nil {
		return
	}
	d.Page = page
	d.Text = page.Text()
}

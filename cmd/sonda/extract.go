package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/fetch"
)

func init() { register(newExtractCmd) }

func newExtractCmd() *cobra.Command {
	var urls []string
	var mode string
	var workers int
	var noFallback, fastPath bool
	cmd := &cobra.Command{
		Use:   "extract [--url URL]... [--mode sonda|thesis|trafilatura] FILE...",
		Short: "Extract the article (metadata and body) from saved HTML files as JSON",
		Long: `extract reads saved HTML pages and prints what sonda extracts from each: url,
canonical_url, title, description, authors, published and modified (RFC 3339 with the
page's zone), site_name, language, section, tags, image, body (paragraphs, headings, list
items, quotes with their kind), text (the body as one string, blocks separated by blank
lines), word_count, is_article and kind (article, listing, page,
media, empty; not_article says why a page is not one), and sources (which signal gave
each field).

One FILE prints one JSON object; several print one JSON object per line, each with a
"file" field, in the order given. "-" reads standard input. The i-th --url is the address
of the i-th file: it resolves relative links and dates in the path and is the article's
url. Files are extracted in parallel on --workers cores. The exit status is 1 if a file
could not be read.

Modes: sonda (the cascade: JSON-LD, Open Graph, Twitter, meta, microdata, <time>,
bylines; body by go-trafilatura, or by the <article> fast path with --fast-path), thesis (seed 003's Open Graph
fields and <article> paragraphs), trafilatura (go-trafilatura alone).

  sonda extract page.html
  sonda extract --url https://example.org/news/1 saved.html | jq .title
  sonda extract pages/*.html > articles.jsonl`,
		Args: func(_ *cobra.Command, files []string) error {
			if len(files) == 0 {
				return usageError{errors.New("give one or more saved HTML files (- reads standard input)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, files []string) error {
			if len(urls) > len(files) {
				return usageError{fmt.Errorf("%d --url values for %d files: the i-th --url names the i-th file", len(urls), len(files))}
			}
			ex, err := extract.New(extract.Options{Mode: extract.Mode(mode), NoFallback: noFallback, FastPath: fastPath})
			if err != nil {
				return usageError{err}
			}
			if workers <= 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			return runExtract(cmd.OutOrStdout(), cmd.InOrStdin(), cmd.ErrOrStderr(), ex, files, urls, workers)
		},
	}
	cmd.Flags().StringArrayVar(&urls, "url", nil, "address of the i-th `URL` file (repeat per file)")
	cmd.Flags().StringVar(&mode, "mode", string(extract.ModeSonda), "extraction `MODE`: sonda, thesis or trafilatura")
	cmd.Flags().IntVar(&workers, "workers", 0, "files extracted at once (default: one per core)")
	cmd.Flags().BoolVar(&noFallback, "no-fallback", false, "take the body from go-trafilatura alone: no Readability or DOM Distiller fallback, no vote among the extractors (faster, less accurate)")
	cmd.Flags().BoolVar(&fastPath, "fast-path", false, "take the body from a page's <article> without go-trafilatura when it clearly holds the text (faster, slightly less complete)")
	return cmd
}

// extractResult is one file's line: the file name, then the article's fields, or an error.
type extractResult struct {
	File string `json:"file"`
	*extract.Article
	// Text is the body as one string, blocks separated by blank lines: what a user pipes
	// into other tools (issue 13 keeps it beside the structured body).
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

// articleJSON is one file's output when only one is given: the article and its text.
type articleJSON struct {
	*extract.Article
	Text string `json:"text"`
}

func runExtract(out io.Writer, stdin io.Reader, errOut io.Writer, ex *extract.Extractor, files, urls []string, workers int) error {
	results := make([]chan extractResult, len(files))
	for i := range results {
		results[i] = make(chan extractResult, 1)
	}
	jobs := make(chan int)
	for w := 0; w < min(workers, len(files)); w++ {
		go func() {
			for i := range jobs {
				pageURL := ""
				if i < len(urls) {
					pageURL = urls[i]
				}
				results[i] <- extractFile(ex, files[i], pageURL, stdin)
			}
		}()
	}
	go func() {
		for i := range files {
			jobs <- i
		}
		close(jobs)
	}()

	w := bufio.NewWriterSize(out, 1<<16)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if len(files) == 1 {
		enc.SetIndent("", "  ")
	}
	failed := 0
	for i := range files {
		r := <-results[i]
		if r.Error != "" {
			failed++
			fmt.Fprintf(errOut, "sonda extract: %s: %s\n", r.File, r.Error)
		}
		var v any = r
		if len(files) == 1 {
			if r.Article == nil {
				continue
			}
			v = articleJSON{r.Article, r.Text}
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return silentExit{1} // each failure was reported on stderr
	}
	return nil
}

// maxExtractBytes bounds a file read for extraction, as fetch.max-body bounds a crawl.
const maxExtractBytes = 64 << 20

func extractFile(ex *extract.Extractor, name, pageURL string, stdin io.Reader) extractResult {
	r := extractResult{File: name}
	var raw []byte
	var err error
	if name == "-" {
		raw, err = io.ReadAll(io.LimitReader(stdin, maxExtractBytes))
	} else {
		raw, err = readLimited(name, maxExtractBytes)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	a, err := ex.Extract(fetch.ToUTF8(raw, "text/html"), pageURL)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Article, r.Text = a, a.Text()
	return r
}

func readLimited(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("larger than 64 MiB: not a web page")
	}
	return b, nil
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
)

func init() { register(newExportCmd) }

func newExportCmd() *cobra.Command {
	var what, format string
	cmd := &cobra.Command{
		Use:         "export [--data DIR] --what pages|articles|datasets [--format jsonl]",
		Annotations: map[string]string{annotStop: stopAtOnce},
		Short:       "Write crawl records as JSON lines",
		Long: `export writes one JSON object per line to stdout. --what pages gives every URL's latest
record: url, final_url, status, fetched_at, content_type, title, depth, parent,
fingerprint, changed (and relevance/relevant when a topic is set), plus error, duplicate
and robots fields. --what datasets gives every geographic dataset a geo crawl fetched: url,
format, layers, bounding boxes, CRS, place names, thumbnail, and the pages linking to it
with their anchor text. --what articles gives every article a news crawl stored: url,
canonical_url, title, description, authors, published, modified, site_name, language,
section, tags, image, body (paragraphs and headings), word_count, fetched_at, first_seen,
changed, simhash. The crawl must not be running (its state is locked while it runs).

  sonda export --data sonda-data --what pages > pages.jsonl
  sonda export --data sonda-data --what pages | jq -r 'select(.error != null) | [.error, .url] | @tsv'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if format != "jsonl" {
				return usageError{fmt.Errorf("--format %q: only jsonl is supported", format)}
			}
			if what != "pages" && what != "datasets" && what != "articles" {
				return usageError{fmt.Errorf("--what %q: this build exports pages, articles or datasets", what)}
			}
			if _, err := os.Stat(crawl.StateDir(cfg.Data)); err != nil {
				return usageError{fmt.Errorf("no crawl in %s: %w", cfg.Data, err)}
			}
			in, err := openApp(cfg, app.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer in.Close()
			db := in.DB
			w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			switch what {
			case "articles":
				err = news.Each(db, func(a *news.Article) error { return enc.Encode(a) })
			case "datasets":
				err = catalog.New(db).Datasets(func(d *catalog.Dataset) error { return enc.Encode(d) })
			default:
				err = db.Pages(func(p *store.Page) error { return enc.Encode(p) })
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&what, "what", "pages", "records to export: pages, articles or datasets")
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format: jsonl")
	return cmd
}

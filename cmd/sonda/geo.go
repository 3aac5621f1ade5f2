package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/app"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/geo"
	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
)

func init() { register(newGeoCmd) }

func newGeoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "geo",
		Short: "Geographic data: inspect dataset files, re-check dataset links",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGeoInspectCmd(), newGeoRecheckCmd())
	return cmd
}

func newGeoInspectCmd() *cobra.Command {
	var noPlaces bool
	cmd := &cobra.Command{
		Use:   "inspect FILE...",
		Short: "Print the metadata of geographic data files as JSON",
		Long: `inspect reads each file — a shapefile (.shp, with its .dbf, .prj and .cpg beside it), GeoJSON,
KML or KMZ, GPX, GeoPackage, GeoTIFF, GML, CSV with latitude/longitude columns, or a zip
archive of any of these — and prints what it found: format, layers with geometry type,
feature count, fields, bounding box in the native CRS and in WGS84, the CRS's name and EPSG
code, place names from the attributes, the gazetteer places the box covers, the class the
file name suggests, and sidecar metadata text.

One file prints one JSON object; several print one object per line, each with its "file".
A file that cannot be read prints {"file": ..., "error": ...} and makes the exit status 1.

  sonda geo inspect rios.shp
  sonda geo inspect downloads/*.zip | jq -r '[.file, .format, .bbox_wgs84] | @json'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			opts := geo.Options{}
			if !noPlaces {
				opts.Places = geo.NewPlaceFinder(nil)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			if len(files) == 1 {
				enc.SetIndent("", "  ")
			}
			failed := 0
			for _, f := range files {
				ds, err := geo.Inspect(cmd.Context(), f, opts)
				var out any = ds
				if err != nil {
					failed++
					out = struct {
						File  string `json:"file"`
						Error string `json:"error"`
					}{f, err.Error()}
				}
				if err := enc.Encode(out); err != nil {
					return err
				}
			}
			if failed > 0 {
				return silentExit{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noPlaces, "no-places", false, "skip place names and covered places (no gazetteer lookups)")
	return cmd
}

func newGeoRecheckCmd() *cobra.Command {
	var olderThan time.Duration
	var hosts int
	cmd := &cobra.Command{
		Use:   "recheck [--data DIR] [--older-than 24h]",
		Short: "Re-check the links of found datasets; broken ones leave search",
		Long: `recheck requests every dataset a geo crawl found again, host by host with the crawl's
politeness (robots.txt, politeness.min-delay between requests to a host), without
downloading the files. A link that answers 404 or 410 is marked gone and leaves search;
its record stays (sonda export --what datasets shows "gone"), so crawls do not fetch it as
new. A gone link that answers again comes back. Server errors and timeouts change
nothing: the next recheck tries again. The crawl must not be running.

  sonda geo recheck --data sonda-data
  sonda geo recheck --data sonda-data --older-than 168h   # only links not checked for a week`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, crawlFlags...)
			if err != nil {
				return err
			}
			if _, err := os.Stat(crawl.StateDir(cfg.Data)); err != nil {
				return usageError{fmt.Errorf("no crawl in %s: %w", cfg.Data, err)}
			}
			// The dataset documents follow the catalog only while its indexer runs.
			cfg.Geo.Enabled = true
			log := newLogger(cfg)
			in, err := openApp(cfg, app.Options{Logger: log, Crawl: true})
			if err != nil {
				return err
			}
			defer in.Close()
			f, err := geosearch.NewRecheckFetcher(cfg)
			if err != nil {
				return err
			}
			defer f.Close()
			w := cmd.ErrOrStderr()
			last := time.Now()
			ro := geosearch.RecheckOptionsFrom(cfg, olderThan, log)
			ro.Hosts = hosts
			ro.Progress = func(s geosearch.RecheckStats) {
				if time.Since(last) >= 2*time.Second {
					last = time.Now()
					fmt.Fprintf(w, "checked %d: %d ok, %d gone, %d without answer\n", s.Checked, s.OK, s.Gone, s.Failed)
				}
			}
			st, err := geosearch.Recheck(cmd.Context(), catalog.New(in.DB), f, ro)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "checked %d dataset links: %d ok, %d newly gone, %d restored, %d without an answer (kept), %d forbidden by robots.txt, %d checked within %s\n",
				st.Checked, st.OK, st.Gone, st.Restored, st.Failed, st.Robots, st.Recent, olderThan)
			return in.Close()
		},
	}
	f := cmd.Flags()
	f.DurationVar(&olderThan, "older-than", 0, "skip links checked or fetched within this `DURATION` (0: check all)")
	f.IntVar(&hosts, "hosts", 4, "hosts checked at once")
	addAllowPrivateFlag(f)
	f.Duration("min-delay", 0, "minimum pause between requests to one host, e.g. 500ms")
	f.StringArray("resolve", nil, "dial `HOST=ADDR` for matching hosts, like curl --resolve")
	return cmd
}

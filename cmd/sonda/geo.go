package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/geo"
)

func init() { register(newGeoCmd) }

func newGeoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "geo",
		Short: "Geographic data: inspect dataset files",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGeoInspectCmd())
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

// Command gen writes esri.tsv.gz, the table package crs uses to recognise CRS names that
// carry no EPSG code (the .prj files ArcGIS and GDAL write). It reads PROJ's proj.db, which
// Debian installs with proj-data (apt-get install proj-data):
//
//	go run ./geo/crs/gen /usr/share/proj/proj.db > geo/crs/esri.tsv.gz
//
// Each line is "code<TAB>EPSG name<TAB>ESRI name" for every non-deprecated EPSG geographic
// and projected CRS (the ESRI name is empty when ESRI has none).
package main

import (
	"compress/gzip"
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen /usr/share/proj/proj.db > esri.tsv.gz")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w (install proj-data)", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	const q = `
SELECT c.code, c.name, COALESCE((SELECT a.alt_name FROM alias_name a WHERE a.table_name = '%[1]s'
       AND a.auth_name = c.auth_name AND a.code = c.code AND a.source = 'ESRI' LIMIT 1), '')
FROM %[1]s c WHERE c.auth_name = 'EPSG' AND c.deprecated = 0 %[2]s ORDER BY CAST(c.code AS INTEGER)`
	zw, err := gzip.NewWriterLevel(os.Stdout, gzip.BestCompression)
	if err != nil {
		return err
	}
	for _, t := range []struct{ table, where string }{
		{"geodetic_crs", "AND c.type = 'geographic 2D'"},
		{"projected_crs", ""},
	} {
		rows, err := db.Query(fmt.Sprintf(q, t.table, t.where))
		if err != nil {
			return fmt.Errorf("query %s: %w", t.table, err)
		}
		for rows.Next() {
			var code, name, esri string
			if err := rows.Scan(&code, &name, &esri); err != nil {
				return err
			}
			fmt.Fprintf(zw, "%s\t%s\t%s\n", code, name, esri)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
	}
	return zw.Close()
}

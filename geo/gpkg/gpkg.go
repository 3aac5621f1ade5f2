// Package gpkg reads the metadata of a GeoPackage (an SQLite database with the OGC
// GeoPackage tables): its layers from gpkg_contents, their geometry columns and types,
// spatial reference systems from gpkg_spatial_ref_sys, feature counts, attribute fields,
// extents computed from the geometries, and a sketch of each layer for thumbnails.
//
// SQLite is read through modernc.org/sqlite (pure Go), opened read-only and immutable so
// a crawled file is never written to and leaves no journal behind.
package gpkg

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/geo/wkb"
)

// Field is an attribute column.
type Field struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Layer is one table listed in gpkg_contents.
type Layer struct {
	Name          string
	DataType      string // "features", "tiles", "attributes"
	Identifier    string
	Description   string
	GeomColumn    string
	GeometryType  string // from gpkg_geometry_columns, e.g. "MultiPolygon"
	SRSID         int
	SRSName       string
	Organization  string // e.g. "EPSG"
	OrgCode       int    // e.g. 4326
	Definition    string // WKT
	Features      int
	BBox          geom.BBox // of the geometries (empty when none)
	ContentsBBox  geom.BBox // as gpkg_contents states it (empty when null)
	Fields        []Field
	Rows          [][]string // attribute values of the first MaxRows rows, as text, one per field
	Sketch        geom.Sketch
	BadGeometries int // geometries that did not decode
}

// MaxRows bounds the attribute rows kept per layer for place-name extraction.
const MaxRows = 5000

// Read opens the GeoPackage at path and describes its layers.
func Read(ctx context.Context, path string) ([]Layer, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("gpkg: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, `SELECT table_name, data_type, COALESCE(identifier,''), COALESCE(description,''),
		min_x, min_y, max_x, max_y, COALESCE(srs_id, 0) FROM gpkg_contents ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("gpkg: %s has no readable gpkg_contents table (not a GeoPackage?): %w", path, err)
	}
	var layers []Layer
	for rows.Next() {
		var l Layer
		var minx, miny, maxx, maxy sql.NullFloat64
		if err := rows.Scan(&l.Name, &l.DataType, &l.Identifier, &l.Description, &minx, &miny, &maxx, &maxy, &l.SRSID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("gpkg: gpkg_contents: %w", err)
		}
		l.ContentsBBox = geom.Empty()
		if minx.Valid && miny.Valid && maxx.Valid && maxy.Valid {
			l.ContentsBBox.Extend(minx.Float64, miny.Float64)
			l.ContentsBBox.Extend(maxx.Float64, maxy.Float64)
		}
		layers = append(layers, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("gpkg: gpkg_contents: %w", err)
	}
	for i := range layers {
		if err := describe(ctx, db, &layers[i]); err != nil {
			return layers, err
		}
	}
	return layers, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func describe(ctx context.Context, db *sql.DB, l *Layer) error {
	l.BBox = geom.Empty()
	if l.DataType == "features" {
		var srs int
		err := db.QueryRowContext(ctx, `SELECT column_name, geometry_type_name, srs_id FROM gpkg_geometry_columns WHERE table_name = ?`, l.Name).
			Scan(&l.GeomColumn, &l.GeometryType, &srs)
		if err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("gpkg: geometry column of %s: %w", l.Name, err)
		}
		if srs != 0 || l.SRSID == 0 {
			l.SRSID = srs
		}
		l.GeometryType = typeName(l.GeometryType)
	}
	err := db.QueryRowContext(ctx, `SELECT srs_name, organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?`, l.SRSID).
		Scan(&l.SRSName, &l.Organization, &l.OrgCode, &l.Definition)
	if err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("gpkg: spatial reference %d of %s: %w", l.SRSID, l.Name, err)
	}
	if l.DataType == "tiles" {
		return nil
	}
	cols, err := db.QueryContext(ctx, `SELECT name, type FROM pragma_table_info(?)`, l.Name)
	if err != nil {
		return fmt.Errorf("gpkg: columns of %s: %w", l.Name, err)
	}
	var names []string
	for cols.Next() {
		var f Field
		if err := cols.Scan(&f.Name, &f.Type); err != nil {
			cols.Close()
			return err
		}
		if f.Name == l.GeomColumn {
			continue
		}
		if strings.EqualFold(f.Name, "fid") && strings.EqualFold(f.Type, "INTEGER") {
			continue // the primary key GDAL adds
		}
		l.Fields = append(l.Fields, f)
		names = append(names, quoteIdent(f.Name))
	}
	cols.Close()
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(l.Name)).Scan(&l.Features); err != nil {
		return fmt.Errorf("gpkg: counting %s: %w", l.Name, err)
	}
	if err := readAttributes(ctx, db, l, names); err != nil {
		return err
	}
	return readGeometries(ctx, db, l)
}

// readAttributes keeps the attribute values of the first MaxRows rows. It asks for those
// rows only: the geometries are read apart, so a large layer's other attributes are never
// read or converted.
func readAttributes(ctx context.Context, db *sql.DB, l *Layer, names []string) error {
	if len(names) == 0 {
		return nil
	}
	rs, err := db.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+quoteIdent(l.Name)+` LIMIT `+strconv.Itoa(MaxRows))
	if err != nil {
		return fmt.Errorf("gpkg: reading %s: %w", l.Name, err)
	}
	defer rs.Close()
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return fmt.Errorf("gpkg: reading %s: %w", l.Name, err)
		}
		row := make([]string, len(names))
		for i := range names {
			row[i] = text(vals[i])
		}
		l.Rows = append(l.Rows, row)
	}
	return rs.Err()
}

// readGeometries decodes every geometry of the layer into its box and sketch.
func readGeometries(ctx context.Context, db *sql.DB, l *Layer) error {
	if l.GeomColumn == "" {
		return nil
	}
	rs, err := db.QueryContext(ctx, `SELECT `+quoteIdent(l.GeomColumn)+` FROM `+quoteIdent(l.Name))
	if err != nil {
		return fmt.Errorf("gpkg: reading %s: %w", l.Name, err)
	}
	defer rs.Close()
	for rs.Next() {
		var blob []byte
		if err := rs.Scan(&blob); err != nil {
			return fmt.Errorf("gpkg: reading %s: %w", l.Name, err)
		}
		if len(blob) == 0 {
			continue
		}
		g, err := wkb.DecodeGeoPackage(blob)
		if err != nil {
			l.BadGeometries++
			continue
		}
		for _, part := range g.Geometry.Shape.Parts {
			for _, p := range part {
				l.BBox.Extend(p.X, p.Y)
			}
		}
		l.Sketch.Add(g.Geometry.Shape)
	}
	return rs.Err()
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// typeName spells a GeoPackage geometry type the way the other readers do.
func typeName(t string) string {
	switch strings.ToUpper(t) {
	case "POINT":
		return geom.TypePoint
	case "MULTIPOINT":
		return geom.TypeMultiPoint
	case "LINESTRING":
		return geom.TypeLineString
	case "MULTILINESTRING":
		return geom.TypeMultiLineString
	case "POLYGON":
		return geom.TypePolygon
	case "MULTIPOLYGON":
		return geom.TypeMultiPolygon
	case "GEOMETRYCOLLECTION":
		return geom.TypeGeometryCollection
	case "":
		return ""
	}
	return geom.TypeGeometry
}

// Package geo owns sonda's geographic-data vertical: it recognises geographic datasets
// (shapefiles, GeoJSON, KML/KMZ, GPX, GeoPackage, GeoTIFF, GML, CSV with coordinates, and
// zip archives of them), reads their metadata — layers, geometry type, feature count,
// fields, bounding box in the native CRS and in WGS84, CRS name and EPSG code, sidecar
// metadata text — and the place names they mention (see places.go), and draws thumbnails.
//
// The binary formats have their own packages (geo/shapefile, geo/geotiff, geo/gpkg,
// geo/wkb), as do CRSs (geo/crs), archives (geo/archive) and the gazetteer
// (geo/gazetteer); the text formats are small enough to live here. Discovery while
// crawling is package geo/discover; producer ranking is geo/rank.
//
// Inspect never trusts a file: sizes, counts and nesting are bounded, temporary files are
// removed before it returns, and a broken file gives an error that names the file and the
// problem (layers that could be read are still returned alongside per-layer errors).
package geo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/sonda-search/sonda/geo/archive"
	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/geo/geotiff"
)

// Format names, as `sonda geo inspect` reports them.
const (
	FormatShapefile = "shapefile"
	FormatDBF       = "dbf"
	FormatGeoJSON   = "geojson"
	FormatKML       = "kml"
	FormatKMZ       = "kmz"
	FormatGPX       = "gpx"
	FormatGeoPkg    = "geopackage"
	FormatGeoTIFF   = "geotiff"
	FormatGML       = "gml"
	FormatCSV       = "csv"
	FormatZip       = "zip"
)

// Dataset is what Inspect found in one file.
type Dataset struct {
	File      string    `json:"file"`
	Format    string    `json:"format"`              // the data's format (a zip's: the first layer's)
	Container string    `json:"container,omitempty"` // "zip" when the data came in an archive
	Size      int64     `json:"size"`
	Layers    []*Layer  `json:"layers"`
	BBox      geom.BBox `json:"bbox_wgs84"` // union of the layers' WGS84 boxes (null when none is known)
	// Class is what the file name says the data is about ("rios.shp" → "rivers").
	Class string `json:"class,omitempty"`
	// Places are the place names found in the data (attribute values, feature names).
	Places []Place `json:"places,omitempty"`
	// Covers are gazetteer places inside the WGS84 box, largest first.
	Covers []Place `json:"covers,omitempty"`
	// Metadata is sidecar text: a shapefile's .shp.xml or same-named .txt (thesis Fig. 3-17).
	Metadata string   `json:"metadata_text,omitempty"`
	Skipped  []string `json:"skipped,omitempty"` // archive members left out, and why
	Errors   []string `json:"errors,omitempty"`  // problems with parts of the file
}

// Layer is one table of features or one raster.
type Layer struct {
	Name         string    `json:"name"`
	Format       string    `json:"format"`
	Member       string    `json:"member,omitempty"` // path inside an archive
	GeometryType string    `json:"geometry_type"`
	Features     int       `json:"feature_count"`
	Fields       []Field   `json:"fields,omitempty"`
	BBox         geom.BBox `json:"bbox"`       // native CRS
	BBoxWGS84    geom.BBox `json:"bbox_wgs84"` // null when the CRS is unknown or cannot be transformed
	CRS          *crs.CRS  `json:"crs"`        // null when the file names none
	Raster       *Raster   `json:"raster,omitempty"`
	Encoding     string    `json:"encoding,omitempty"` // attribute text code page
	Places       []Place   `json:"-"`                  // this layer's share of Dataset.Places
	Error        string    `json:"error,omitempty"`

	rows   [][]string // attribute values (first maxRows rows) for place names
	sketch geom.Sketch
	grid   *geotiff.Grid
}

// Field is an attribute column.
type Field struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Raster describes a raster layer.
type Raster struct {
	Width      int        `json:"width"`
	Height     int        `json:"height"`
	Bands      int        `json:"bands"`
	SampleType string     `json:"sample_type"`
	PixelSize  [2]float64 `json:"pixel_size"`
	NoData     *float64   `json:"nodata,omitempty"`
}

// Options bound Inspect. The zero value is usable.
type Options struct {
	TempDir  string         // where archives are unpacked (default os.TempDir())
	Archive  archive.Limits // zip limits
	MaxBytes int64          // largest file read whole (text formats); default 512 MiB
	// Name is the file name to judge the format and class by when path is a temporary
	// file (a download); default filepath.Base(path).
	Name string
	// Places extracts place names (needs the gazetteer); Inspect fills Places and Covers
	// when it is set.
	Places *PlaceFinder
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes <= 0 {
		return 512 << 20
	}
	return o.MaxBytes
}

// maxRows bounds the attribute rows kept per layer for place-name extraction.
const maxRows = 5000

// ErrUnknownFormat means the file is not a geographic format sonda reads.
var ErrUnknownFormat = errors.New("geo: not a geographic data format sonda reads")

// Inspect reads the dataset at path.
func Inspect(ctx context.Context, path string, opts Options) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("geo: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("geo: %s is a directory; give the files in it", path)
	}
	name := opts.Name
	if name == "" {
		name = filepath.Base(path)
	}
	ds := &Dataset{File: path, Size: st.Size(), BBox: geom.Empty()}
	format, err := sniff(path, name)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatZip:
		ds.Container = FormatZip
		err = inspectZip(ctx, ds, path, opts)
	default:
		var layers []*Layer
		layers, err = inspectFile(ctx, path, name, format, opts)
		ds.Layers = layers
		if format == FormatShapefile || format == FormatDBF {
			ds.Metadata = sidecarText(path, nil)
		}
	}
	if err != nil && len(ds.Layers) == 0 {
		return nil, fmt.Errorf("geo: %s: %w", name, err)
	}
	if err != nil {
		ds.Errors = append(ds.Errors, err.Error())
	}
	ds.finish(name, opts)
	return ds, nil
}

// finish sets the dataset's format, box, class and places from its layers.
func (ds *Dataset) finish(name string, opts Options) {
	for _, l := range ds.Layers {
		if ds.Format == "" {
			ds.Format = l.Format
		}
		ds.BBox = ds.BBox.Union(l.BBoxWGS84)
		if l.Error != "" {
			ds.Errors = append(ds.Errors, l.Name+": "+l.Error)
		}
	}
	if ds.Format == "" {
		ds.Format = ds.Container
	}
	ds.Class = ClassOf(name)
	if opts.Places != nil {
		opts.Places.Find(ds)
	}
}

// sniff decides the format from the first bytes, then from the name.
func sniff(path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("geo: %w", err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case archive.IsZip(head):
		if ext == ".kmz" {
			return FormatKMZ, nil
		}
		return FormatZip, nil
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")),
		bytes.HasPrefix(head, []byte("II+\x00")), bytes.HasPrefix(head, []byte("MM\x00+")):
		return FormatGeoTIFF, nil
	case len(head) >= 4 && bytes.Equal(head[:4], []byte{0, 0, 0x27, 0x0a}):
		return FormatShapefile, nil
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return FormatGeoPkg, nil
	}
	if ext == ".dbf" {
		return FormatDBF, nil
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(text) > 0 && (text[0] == '{' || text[0] == '['):
		if bytes.Contains(head, []byte(`"type"`)) || ext == ".geojson" || ext == ".json" {
			return FormatGeoJSON, nil
		}
	case len(text) > 0 && text[0] == '<':
		switch root := xmlRoot(text); {
		case root == "kml":
			return FormatKML, nil
		case root == "gpx":
			return FormatGPX, nil
		case root == "wms_capabilities" || root == "wmt_ms_capabilities" || root == "wfs_capabilities":
			return FormatOGC, nil
		case bytes.Contains(head, []byte("opengis.net/gml")) || ext == ".gml":
			return FormatGML, nil
		}
	}
	if ext == ".csv" || ext == ".tsv" || ext == ".txt" {
		if _, ok := csvCoordinateColumns(head); ok {
			return FormatCSV, nil
		}
	}
	return "", fmt.Errorf("geo: %s: %w", name, ErrUnknownFormat)
}

// xmlRoot is the local name of the first element, lowercased.
func xmlRoot(b []byte) string {
	for i := 0; i < len(b)-1; i++ {
		if b[i] != '<' || b[i+1] == '?' || b[i+1] == '!' {
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != ' ' && b[j] != '>' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' && b[j] != '/' {
			j++
		}
		name := string(b[i+1 : j])
		if k := strings.LastIndexByte(name, ':'); k >= 0 {
			name = name[k+1:]
		}
		return strings.ToLower(name)
	}
	return ""
}

// inspectFile reads one (unpacked) file of a known format.
func inspectFile(ctx context.Context, path, name, format string, opts Options) ([]*Layer, error) {
	switch format {
	case FormatShapefile:
		l, err := readShapefile(path, name)
		return nonNil(l), err
	case FormatDBF:
		l, err := readDBFOnly(path, name)
		return nonNil(l), err
	case FormatGeoTIFF:
		l, err := readGeoTIFF(path, name)
		return nonNil(l), err
	case FormatGeoPkg:
		return readGeoPackage(ctx, path)
	case FormatKMZ:
		return readKMZ(path, name, opts)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > opts.maxBytes() {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d read for %s files", name, st.Size(), opts.maxBytes(), format)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatGeoJSON:
		l, err := readGeoJSON(data, name)
		return nonNil(l), err
	case FormatKML:
		return readKML(data, name, FormatKML)
	case FormatGPX:
		return readGPX(data, name)
	case FormatGML:
		l, err := readGML(data, name)
		return nonNil(l), err
	case FormatCSV:
		l, err := readCSV(data, name)
		return nonNil(l), err
	case FormatOGC:
		return readCapabilities(data, name)
	}
	return nil, ErrUnknownFormat
}

func nonNil(l *Layer) []*Layer {
	if l == nil {
		return nil
	}
	return []*Layer{l}
}

// inspectZip unpacks the archive into a temporary directory, reads every geographic file
// in it (shapefile parts grouped by name, in any sub-folder) and removes the directory.
func inspectZip(ctx context.Context, ds *Dataset, path string, opts Options) error {
	dir, err := os.MkdirTemp(opts.TempDir, "sonda-geo-*")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	files, skipped, xerr := archive.Extract(path, dir, opts.Archive)
	ds.Skipped = skipped
	if xerr != nil && !errors.Is(xerr, archive.ErrNotZip) {
		// A limit was hit: what was unpacked before is not trustworthy enough to index.
		return xerr
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var firstErr error
	var sidecarFiles []archive.File
	for _, f := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ext := strings.ToLower(filepath.Ext(f.Name))
		switch ext {
		case ".shx", ".prj", ".cpg", ".sbn", ".sbx", ".qix", ".qpj", ".cst", ".fix":
			continue // read with their .shp
		case ".xml", ".txt", ".htm", ".html":
			if ext == ".txt" {
				if fm, _ := sniff(f.Path, f.Name); fm == FormatCSV {
					break
				}
			}
			if ext == ".xml" && !strings.HasSuffix(strings.ToLower(f.Name), ".shp.xml") {
				if fm, _ := sniff(f.Path, f.Name); fm != "" {
					break
				}
			}
			sidecarFiles = append(sidecarFiles, f)
			continue
		case ".dbf":
			if hasSibling(f.Path, ".shp") {
				continue // an attribute table of a shapefile, read with it
			}
		}
		format, err := sniff(f.Path, f.Name)
		if err != nil {
			ds.Skipped = append(ds.Skipped, f.Name+" (not a geographic format)")
			continue
		}
		if format == FormatZip { // only when nesting was cut: archive already unpacked nested ones
			continue
		}
		layers, err := inspectFile(ctx, f.Path, filepath.Base(f.Name), format, opts)
		for _, l := range layers {
			l.Member = f.Name
			ds.Layers = append(ds.Layers, l)
		}
		if err != nil {
			ds.Errors = append(ds.Errors, f.Name+": "+err.Error())
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	for _, l := range ds.Layers {
		if ds.Metadata != "" {
			break // the first shapefile's sidecar text is kept: read no more
		}
		if l.Format == FormatShapefile || l.Format == FormatDBF {
			var base string
			for _, f := range files {
				if f.Name == l.Member {
					base = f.Path
				}
			}
			if base != "" {
				ds.Metadata = sidecarText(base, sidecarFiles)
			}
		}
	}
	if len(ds.Layers) == 0 {
		if firstErr != nil {
			return firstErr
		}
		return fmt.Errorf("the archive holds no geographic data (%d files)", len(files))
	}
	return nil
}

// hasSibling reports whether a file with the same base name and the extension (any case)
// exists next to path.
func hasSibling(path, ext string) bool { return sibling(path, ext) != "" }

// sibling returns the path of the same-named file with another extension, matching the
// extension case-insensitively ("RIOS.SHP" finds "rios.dbf" and "RIOS.DBF"), or "".
func sibling(path, ext string) string {
	dir := filepath.Dir(path)
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for _, cand := range []string{base + ext, base + strings.ToUpper(ext)} {
		p := filepath.Join(dir, cand)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	want := strings.ToLower(base + ext)
	for _, e := range entries {
		if strings.ToLower(e.Name()) == want {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// maxSidecarText bounds the metadata text kept.
const maxSidecarText = 8 << 10

// sidecarText returns the text of a shapefile's .shp.xml or same-named .txt, tags stripped.
func sidecarText(shpPath string, candidates []archive.File) string {
	base := strings.TrimSuffix(shpPath, filepath.Ext(shpPath))
	paths := []string{sibling(shpPath, ".shp.xml"), base + ".shp.xml", sibling(shpPath, ".txt"), sibling(shpPath, ".xml")}
	for _, c := range candidates { // same folder, any metadata file, when nothing matches by name
		if filepath.Dir(c.Path) == filepath.Dir(shpPath) {
			paths = append(paths, c.Path)
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
		f.Close()
		if t := plainText(b); t != "" {
			if len(t) > maxSidecarText {
				t = t[:maxSidecarText]
			}
			return t
		}
	}
	return ""
}

// plainText strips XML/HTML tags and collapses white space.
func plainText(b []byte) string {
	var out strings.Builder
	in, space := false, false
	for _, r := range string(b) { // invalid UTF-8 reads as U+FFFD
		switch {
		case r == '<':
			in = true
		case r == '>':
			in, space = false, true
		case in:
		case unicode.IsSpace(r):
			space = true
		default:
			if space && out.Len() > 0 {
				out.WriteByte(' ')
			}
			space = false
			out.WriteRune(r)
		}
	}
	return strings.TrimSpace(out.String())
}

// boxer accumulates a layer's native and WGS84 bounding boxes, transforming every vertex
// (the WGS84 box of projected data is the box of the transformed geometry, not of the
// transformed native box).
type boxer struct {
	crs    *crs.CRS
	native geom.BBox
	wgs    geom.BBox
	failed int
	poles  []crs.Pole // poles the projection maps to a point, which a polygon may surround
}

func newBoxer(c *crs.CRS) *boxer {
	return &boxer{crs: c, native: geom.Empty(), wgs: geom.Empty(), poles: c.Poles()}
}

// coverPoles extends the WGS 84 box to every pole inside the area: its vertices stay short
// of 90°, but the area reaches the pole and every longitude.
func coverPoles(wgs *geom.BBox, poles []crs.Pole, inside func(x, y float64) bool) {
	for _, p := range poles {
		if inside(p.X, p.Y) {
			wgs.Extend(-180, p.Lat)
			wgs.Extend(180, p.Lat)
		}
	}
}

// inRings says whether (x, y) is inside a polygon's rings by the even-odd rule, as
// geom.KindPolygon fills them (holes are rings too). A point within a millimetre (for
// metres) of an edge is on the boundary and not inside: a ring clipped along a parallel
// near the pole runs straight through it, and GDAL does not count that as covering it.
func inRings(parts [][]geom.Point, x, y float64) bool {
	const onEdge = 1e-3
	in := false
	for _, ring := range parts {
		for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
			a, b := ring[i], ring[j]
			if segmentDistance(a, b, x, y) < onEdge {
				return false
			}
			if (a.Y > y) != (b.Y > y) && x < (b.X-a.X)*(y-a.Y)/(b.Y-a.Y)+a.X {
				in = !in
			}
		}
	}
	return in
}

// segmentDistance is the distance from (x, y) to the segment ab.
func segmentDistance(a, b geom.Point, x, y float64) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((x-a.X)*dx+(y-a.Y)*dy)/l))
	}
	return math.Hypot(x-(a.X+t*dx), y-(a.Y+t*dy))
}

func (b *boxer) add(x, y float64) {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return
	}
	b.native.Extend(x, y)
	if !b.crs.CanTransform() {
		return
	}
	lon, lat, err := b.crs.ToWGS84(x, y)
	if err != nil {
		b.failed++
		return
	}
	b.wgs.Extend(lon, lat)
}

func (b *boxer) shape(s geom.Shape) {
	for _, part := range s.Parts {
		for _, p := range part {
			b.add(p.X, p.Y)
		}
	}
	if s.Kind == geom.KindPolygon && len(b.poles) > 0 {
		coverPoles(&b.wgs, b.poles, func(x, y float64) bool { return inRings(s.Parts, x, y) })
	}
}

// wgs84 returns the WGS84 box, or an empty box when the CRS is unknown or some vertices
// could not be transformed (a partial box would be wrong, not approximate).
func (b *boxer) wgs84() geom.BBox {
	if !b.crs.CanTransform() || b.failed > 0 {
		return geom.Empty()
	}
	return b.wgs
}

// edgesToWGS84 transforms a native box by walking its edges: 21 points a side bound the
// curvature of projected edges.
func edgesToWGS84(c *crs.CRS, box geom.BBox) geom.BBox {
	if box.IsEmpty() {
		return geom.Empty()
	}
	return outlineToWGS84(c, [6]float64{box.MinX, box.MaxX - box.MinX, 0, box.MinY, 0, box.MaxY - box.MinY}, 1, 1)
}

// outlineToWGS84 transforms a raster's outline (w × h pixels placed by the geotransform
// t, as geotiff.Info.Transform) by walking its four edges, 21 points each, and adds the
// poles it surrounds. A rotated raster's outline is a parallelogram inside its native box.
func outlineToWGS84(c *crs.CRS, t [6]float64, w, h float64) geom.BBox {
	out := geom.Empty()
	if !c.CanTransform() {
		return out
	}
	at := func(col, row float64) geom.Point {
		return geom.Point{X: t[0] + col*t[1] + row*t[2], Y: t[3] + col*t[4] + row*t[5]}
	}
	const n = 20
	for i := 0; i <= n; i++ {
		f := float64(i) / n
		for _, p := range []geom.Point{at(f*w, 0), at(f*w, h), at(0, f*h), at(w, f*h)} {
			lon, lat, err := c.ToWGS84(p.X, p.Y)
			if err != nil {
				return geom.Empty()
			}
			out.Extend(lon, lat)
		}
	}
	ring := [][]geom.Point{{at(0, 0), at(w, 0), at(w, h), at(0, h), at(0, 0)}}
	coverPoles(&out, c.Poles(), func(x, y float64) bool { return inRings(ring, x, y) })
	return out
}

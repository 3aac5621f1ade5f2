package discover

import (
	"net/url"
	"path"
	"strings"
)

// Kind is what a URL points to, judged from the URL alone (seed 000 §3.6, step 4, extended).
type Kind int

const (
	Page         Kind = iota // (a) a web page: visit it
	Unwanted                 // an extension never worth fetching (pdf, doc, images, ...)
	Shapefile                // (b) .shp (or its .dbf/.shx parts): a dataset
	Archive                  // (c) a compressed file: downloaded only on geographic evidence
	ArchiveShape             // (d) a compressed file with "shp"/"shape" in its name or path: a dataset
	GeoJSON
	KML
	KMZ
	GPX
	GeoPackage
	GeoTIFF // .tif named as geographic ("geotiff", "dem", "srtm"...): a dataset
	TIFF    // any other .tif: a dataset only on evidence
	GML
	CSV     // .csv: kept only on evidence (coordinate columns are known after download)
	Service // an OGC service: WMS/WFS/WCS GetCapabilities
)

var kindNames = map[Kind]string{Page: "page", Unwanted: "unwanted", Shapefile: "shapefile", Archive: "archive",
	ArchiveShape: "archive-shape", GeoJSON: "geojson", KML: "kml", KMZ: "kmz", GPX: "gpx", GeoPackage: "geopackage",
	GeoTIFF: "geotiff", TIFF: "tiff", GML: "gml", CSV: "csv", Service: "ogc-service"}

func (k Kind) String() string { return kindNames[k] }

// Dataset reports whether URLs of this kind are downloaded as datasets without further
// evidence.
func (k Kind) Dataset() bool {
	switch k {
	case Shapefile, ArchiveShape, GeoJSON, KML, KMZ, GPX, GeoPackage, GeoTIFF, GML, Service:
		return true
	}
	return false
}

// NeedsEvidence reports whether URLs of this kind are downloaded only when the page or the
// anchor says they are geographic.
func (k Kind) NeedsEvidence() bool { return k == Archive || k == TIFF || k == CSV }

// Fetched reports whether URLs of this kind are fetched as files, not parsed as pages.
func (k Kind) Fetched() bool { return k.Dataset() || k.NeedsEvidence() }

// UnwantedExtensions are never fetched: the thesis's list (pdf doc txt css ico gif jpg)
// and the rest of the office, media and web-asset formats it waved at with "among others".
var UnwantedExtensions = []string{
	"pdf", "doc", "docx", "txt", "css", "ico", "gif", "jpg", "jpeg", "png", "svg", "webp", "bmp",
	"js", "mjs", "woff", "woff2", "ttf", "eot", "otf", "mp3", "mp4", "avi", "mov", "wmv", "flv", "webm", "ogg", "wav",
	"ppt", "pptx", "xls", "xlsx", "odt", "ods", "odp", "rtf", "exe", "msi", "dmg", "iso", "apk", "jar", "deb", "rpm",
}

var archiveExtensions = map[string]bool{"zip": true, "rar": false, "7z": false, "gz": false, "tgz": false}

var unwanted = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range UnwantedExtensions {
		m[e] = true
	}
	for e, readable := range archiveExtensions {
		if !readable {
			m[e] = true // archives sonda cannot open are not worth their download
		}
	}
	return m
}()

// rasterHints are words in a .tif URL that say it is georeferenced.
var rasterHints = []string{"geotiff", "geotif", "dem", "srtm", "ortho", "landsat", "sentinel", "elev", "mdt", "mde", "mdt", "cog"}

// Classify judges a URL by its path, file name and query.
func Classify(raw string) Kind {
	u, err := url.Parse(raw)
	if err != nil {
		return Page
	}
	lowerPath := strings.ToLower(u.Path)
	q := strings.ToLower(u.RawQuery)
	if strings.Contains(q, "getcapabilities") && (strings.Contains(q, "service=wms") || strings.Contains(q, "service=wfs") || strings.Contains(q, "service=wcs")) {
		return Service
	}
	if strings.Contains(q, "request=getfeature") && strings.Contains(q, "service=wfs") {
		if strings.Contains(q, "json") {
			return GeoJSON
		}
		return GML
	}
	ext := strings.TrimPrefix(path.Ext(lowerPath), ".")
	base := path.Base(lowerPath)
	switch ext {
	case "shp", "dbf", "shx", "prj", "cpg":
		return Shapefile
	case "zip":
		if strings.Contains(lowerPath, "shp") || strings.Contains(lowerPath, "shape") {
			return ArchiveShape
		}
		return Archive
	case "geojson", "topojson":
		return GeoJSON
	case "kml":
		return KML
	case "kmz":
		return KMZ
	case "gpx":
		return GPX
	case "gpkg":
		return GeoPackage
	case "gml":
		return GML
	case "tif", "tiff":
		for _, h := range rasterHints {
			if strings.Contains(base, h) || strings.Contains(lowerPath, "/"+h) {
				return GeoTIFF
			}
		}
		return TIFF
	case "csv":
		return CSV
	case "json":
		if strings.Contains(base, "geo") {
			return GeoJSON
		}
		return Page
	}
	if unwanted[ext] {
		return Unwanted
	}
	return Page
}

package geo

import (
	"archive/zip"
	"fmt"
	"io"
	"path"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxKMLBytes bounds the KML read from a KMZ.
const maxKMLBytes = 256 << 20

// readKMZ reads the main KML document of a KMZ (doc.kml, or the first .kml at the top).
func readKMZ(p, name string, opts Options) ([]*Layer, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, fmt.Errorf("KMZ: %w", err)
	}
	defer zr.Close()
	var doc *zip.File
	for _, f := range zr.File {
		if !strings.EqualFold(path.Ext(f.Name), ".kml") {
			continue
		}
		if doc == nil || strings.EqualFold(f.Name, "doc.kml") || strings.Count(f.Name, "/") < strings.Count(doc.Name, "/") {
			doc = f
		}
	}
	if doc == nil {
		return nil, fmt.Errorf("KMZ: no .kml document inside")
	}
	rc, err := doc.Open()
	if err != nil {
		return nil, fmt.Errorf("KMZ: %w", err)
	}
	defer rc.Close()
	limit := min(int64(maxKMLBytes), opts.maxBytes())
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("KMZ: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("KMZ: %s unpacks past %d bytes", doc.Name, limit)
	}
	return readKML(data, name, FormatKMZ)
}

// charsetReader decodes XML documents declared in another encoding (ISO-8859-1 is common in
// Brazilian KML and GML).
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	r, err := charset.NewReaderLabel(label, input)
	if err != nil {
		return nil, fmt.Errorf("XML encoding %q: %w", label, err)
	}
	return r, nil
}

package geo

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sonda-search/sonda/geo/crs"
	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/text"
)

var (
	latNames = []string{"lat", "latitude", "latitud", "y_lat", "lat_dd", "decimallatitude", "lat_y", "point_y", "y"}
	lonNames = []string{"lon", "lng", "long", "longitude", "longitud", "x_lon", "lon_dd", "lng_dd", "decimallongitude", "lon_x", "point_x", "x"}
)

// csvDelimiter picks the most frequent of , ; tab | in the header line.
func csvDelimiter(head []byte) rune {
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	}
	best, n := ',', 0
	for _, d := range []rune{',', ';', '\t', '|'} {
		if c := bytes.Count(line, []byte(string(d))); c > n {
			best, n = d, c
		}
	}
	return best
}

// csvCoordinateColumns finds the latitude and longitude columns of a CSV header.
func csvCoordinateColumns(head []byte) ([2]int, bool) {
	r := csv.NewReader(bytes.NewReader(head))
	r.Comma = csvDelimiter(head)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return [2]int{}, false
	}
	find := func(names []string) int {
		for _, want := range names {
			for i, h := range header {
				if text.Fold(strings.TrimSpace(strings.Trim(h, "\ufeff\""))) == want {
					return i
				}
			}
		}
		return -1
	}
	lat, lon := find(latNames), find(lonNames)
	return [2]int{lat, lon}, lat >= 0 && lon >= 0 && lat != lon
}

// readCSV reads a CSV with latitude and longitude columns as a point layer. Coordinates
// are taken as WGS 84 when every value is in range; other coordinates are kept with an
// unknown CRS.
func readCSV(data []byte, name string) (*Layer, error) {
	cols, ok := csvCoordinateColumns(data)
	if !ok {
		return nil, fmt.Errorf("CSV: no latitude and longitude columns")
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.Comma = csvDelimiter(data)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("CSV: %w", err)
	}
	l := &Layer{Name: layerName(name), Format: FormatCSV, GeometryType: geom.TypePoint, BBox: geom.Empty(), BBoxWGS84: geom.Empty()}
	for i, h := range header {
		if i != cols[0] && i != cols[1] {
			l.Fields = append(l.Fields, Field{Name: strings.TrimSpace(h), Type: "string"})
		}
	}
	var pts []geom.Point
	inRange, bad := true, 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad++
			if bad > 1000 {
				return nil, fmt.Errorf("CSV: %w", err)
			}
			continue
		}
		if cols[0] >= len(rec) || cols[1] >= len(rec) {
			bad++
			continue
		}
		lat, err1 := strconv.ParseFloat(strings.TrimSpace(strings.Replace(rec[cols[0]], ",", ".", 1)), 64)
		lon, err2 := strconv.ParseFloat(strings.TrimSpace(strings.Replace(rec[cols[1]], ",", ".", 1)), 64)
		if err1 != nil || err2 != nil {
			bad++
			continue
		}
		l.Features++
		pts = append(pts, geom.Point{X: lon, Y: lat})
		inRange = inRange && lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
		if len(l.rows) < maxRows {
			row := make([]string, 0, len(l.Fields))
			for i, v := range rec {
				if i != cols[0] && i != cols[1] && len(row) < len(l.Fields) {
					row = append(row, strings.TrimSpace(v))
				}
			}
			l.rows = append(l.rows, row)
		}
	}
	if l.Features == 0 {
		return nil, fmt.Errorf("CSV: no row has numeric coordinates")
	}
	if inRange {
		l.CRS = crs.WGS84()
	}
	b := newBoxer(l.CRS)
	s := geom.Shape{Kind: geom.KindPoint, Parts: [][]geom.Point{pts}}
	b.shape(s)
	l.sketch.Add(s)
	l.BBox, l.BBoxWGS84 = b.native, b.wgs84()
	if bad > 0 {
		l.Error = fmt.Sprintf("%d rows without numeric coordinates", bad)
	}
	return l, nil
}

// Package geosearch owns the search of geographic datasets: their documents in the search
// index (kind "dataset"), kept in step with the geo catalog as a crawl records datasets and
// the links to them; place-name search in the GeoDiscover thesis's two modes; the gazetteer
// match of a place query against the datasets whose box covers the place; map (bbox)
// search with facets for format, CRS and producer; the thesis's producer order; and the
// broken-link check that takes datasets out of search.
//
// # Documents
//
// A dataset's document keeps the thesis's field provenance (seed 000 §3.9, Fig. 4-2) in
// the index's fields, so that the two search modes differ exactly as the thesis's did:
//
//	title        the file name
//	headings     the class its name gives (rios → rivers), its layer names, the words of its name
//	description  sidecar metadata text (.shp.xml, .txt) and the attribute names
//	anchors      the anchor text of every link to the file
//	extra        place names from its attributes and features (the thesis's inverted list),
//	             format, CRS, producer (typed fields)
//	body         the extended anchor text (±20 words) of the links, and the producer
//	             pages' title, description, keywords and text
//
// "direct" search looks for the words in everything but the body (the place-name
// repository and the anchor text, with the file's own metadata); "expanded" search adds
// the body. Typed fields (Doc.Fields) carry format, crs, epsg, features, size, bbox
// (index.BBox: the bbox: filter), producer, class and places.
//
// Documents are keyed "dataset:" + the dataset URL, so the page sink, which drops the
// document of a URL whose body has no text (every binary download), never touches them.
//
// # Place queries
//
// The thesis matched the query string against place names only. sonda also looks the
// query's words up in the gazetteer: a span of words that names a place (the whole query,
// or "são paulo" inside "rios são paulo") is searched as its words OR a box that covers
// the place's coordinates (bbox: with the place's point). Among the best results, a dataset
// whose box covers the place is lifted by how well the box fits the place: a fit of 1 for a
// box the size of the place, halving for about every factor of ten in area, so the Boston
// census tracts come before a world map that covers Boston too (see Fit).
package geosearch

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/rank"
	"github.com/sonda-search/sonda/index"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/urlnorm"
)

// IDPrefix starts the index ID of every dataset document.
const IDPrefix = "dataset:"

// DocID is the index ID of the dataset at url (the catalog record's URL).
func DocID(datasetURL string) string { return IDPrefix + datasetURL }

// URLOf is the dataset URL of an index ID ("" when id is not a dataset's).
func URLOf(id string) string {
	u, ok := strings.CutPrefix(id, IDPrefix)
	if !ok {
		return ""
	}
	return u
}

// KeyOf is the catalog key of a dataset URL: the crawl's key of the normalized URL the
// record holds (urlnorm.URL.Key: the first 16 bytes of its SHA-256).
func KeyOf(datasetURL string) store.URLKey { return urlnorm.KeyOf(datasetURL) }

// Bounds on what one document carries.
const (
	maxPlaces      = 500     // place names indexed (the attributes of a big layer repeat)
	maxMetadata    = 8 << 10 // sidecar text
	maxContext     = 16 << 10
	maxAnchors     = 64
	maxAnchorBytes = 8 << 10
)

// Doc makes the index document of a dataset record (with its links). sites gives the
// producer site records by name (nil for none). ok is false when the dataset does not
// belong in search (see catalog.Dataset.Searchable).
func Doc(d *catalog.Dataset, sites func(name string) *catalog.Site) (doc index.Doc, ok bool) {
	if d == nil || !d.Searchable() {
		return index.Doc{}, false
	}
	md := d.Metadata
	doc = index.Doc{ID: DocID(d.URL), Kind: index.KindDataset, URL: d.URL, Title: d.Name, Fetched: d.FetchedAt,
		ContentType: d.ContentType, Relevance: -1}
	if u, err := url.Parse(d.URL); err == nil {
		doc.Host = strings.ToLower(u.Hostname())
	}

	var headings []string
	if md.Class != "" {
		headings = append(headings, md.Class)
	}
	fields := map[string]any{"format": md.Format, "size": d.Size, "layers": len(md.Layers)}
	var geometries, fieldNames []string
	features := 0
	crsKey, crsName, epsg := "", "", 0
	for _, l := range md.Layers {
		if l.Name != "" && !slices.Contains(headings, l.Name) {
			headings = append(headings, l.Name)
		}
		features += l.Features
		if l.GeometryType != "" && !slices.Contains(geometries, strings.ToLower(l.GeometryType)) {
			geometries = append(geometries, strings.ToLower(l.GeometryType))
		}
		for _, f := range l.Fields {
			if !slices.Contains(fieldNames, f.Name) && len(fieldNames) < 200 {
				fieldNames = append(fieldNames, f.Name)
			}
		}
		if crsKey == "" && l.CRS != nil {
			crsName, epsg = l.CRS.Name, l.CRS.EPSG
			crsKey = strings.ToLower(strings.TrimSpace(l.CRS.Name))
			if epsg > 0 {
				crsKey = "epsg:" + strconv.Itoa(epsg)
			}
		}
	}
	if w := nameWords(d.Name); w != "" {
		headings = append(headings, w)
	}
	doc.Headings = strings.Join(headings, "\n")
	desc := text.CutBytes(strings.TrimSpace(md.Metadata), maxMetadata)
	if len(fieldNames) > 0 {
		desc = strings.TrimSpace(desc + "\nAttributes: " + strings.Join(fieldNames, ", "))
	}
	doc.Description = desc

	var anchors, context, producers []string
	anchorBytes := 0
	for _, l := range d.Links {
		if a := strings.TrimSpace(l.Anchor); a != "" && !slices.Contains(anchors, a) && len(anchors) < maxAnchors && anchorBytes+len(a) <= maxAnchorBytes {
			anchors = append(anchors, a)
			anchorBytes += len(a)
		}
		if w := strings.TrimSpace(l.Window); w != "" {
			context = append(context, w)
		}
		if l.Site != "" && !slices.Contains(producers, l.Site) {
			producers = append(producers, l.Site)
		}
	}
	doc.Anchors = anchors
	if len(producers) == 0 && doc.Host != "" {
		producers = append(producers, rank.Site(doc.Host))
	}
	for _, p := range producers {
		var s *catalog.Site
		if sites != nil {
			s = sites(p)
		}
		if s == nil {
			continue
		}
		context = append(context, s.Title, s.Description, strings.Join(s.Keywords, ", "), s.Text)
	}
	doc.Body = text.CutBytes(strings.TrimSpace(strings.Join(nonEmpty(context), "\n")), maxContext)
	if l, conf := text.DetectLanguage(strings.Join(anchors, "\n") + "\n" + doc.Body); conf >= 0.5 {
		doc.Lang = l
	}

	var places []string
	for _, p := range md.Places {
		if n := strings.TrimSpace(p.Name); n != "" && !slices.Contains(places, n) {
			places = append(places, n)
			if len(places) == maxPlaces {
				break
			}
		}
	}
	if len(places) > 0 {
		fields["places"] = places
	}
	if len(producers) > 0 {
		fields["producer"] = producers
	}
	if md.Container != "" {
		fields["container"] = md.Container
	}
	if crsKey != "" {
		fields["crs"] = crsKey
		fields["crs_name"] = crsName
	}
	if epsg > 0 {
		fields["epsg"] = epsg
	}
	fields["features"] = features
	if len(geometries) > 0 {
		fields["geometry"] = geometries
	}
	if md.Class != "" {
		fields["class"] = md.Class
	}
	if d.Kind != "" {
		fields["url_kind"] = d.Kind
	}
	if !d.BBox.IsEmpty() {
		// Reprojection leaves the edges of world-wide data a hair beyond ±180 and ±90.
		clamp := func(x, lim float64) float64 { return max(-lim, min(lim, x)) }
		fields["bbox"] = index.BBox{West: clamp(d.BBox.MinX, 180), South: clamp(d.BBox.MinY, 90),
			East: clamp(d.BBox.MaxX, 180), North: clamp(d.BBox.MaxY, 90)}
	}
	fields["thumbnail"] = d.Thumbnail != ""
	doc.Fields = fields
	return doc, true
}

// nameWords splits a file name into words: "vt02_d00_shp.zip" → "vt02 d00 shp zip".
func nameWords(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

func nonEmpty(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

package index

import (
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/sonda-search/sonda/query"
)

// BBox is a box in WGS84 degrees. A Doc.Fields value of this type is indexed as four
// numeric fields (f_<name>_w, _s, _e, _n) and stored; the query language's bbox: filter
// selects the documents whose field "bbox" intersects its box, edges included.
//
// Why four numbers rather than Bleve's geoshape envelope: Bleve builds an envelope's s2
// rectangle from its two corners with AddPoint, which takes the shorter way around the
// globe, so a box wider than 180° of longitude turns into its complement and a world box
// (-180..180) collapses to a line — exactly the datasets a map search must not get
// wrong. Interval tests on the four numbers are exact for every box and use Bleve's
// numeric range postings, which are fast (see BenchmarkBBoxQuery).
//
// A document's box must have West ≤ East (a dataset across the antimeridian is given as
// -180..180, as package geo's readers give it); a query's box may cross the antimeridian
// and is then looked for on both sides.
type BBox = query.BBox

// bboxField is the Doc.Fields name the bbox: filter looks at.
const bboxField = "bbox"

func bboxPart(fname, part string) string { return fname + "_" + part }

func addBBox(doc *document.Document, fname string, b BBox) error {
	if err := checkBox(b); err != nil {
		return err
	}
	for _, p := range []struct {
		part string
		v    float64
	}{{"w", b.West}, {"s", b.South}, {"e", b.East}, {"n", b.North}} {
		doc.AddField(document.NewNumericFieldWithIndexingOptions(bboxPart(fname, p.part), nil, p.v, keywordOptions))
	}
	return nil
}

func checkBox(b BBox) error {
	if _, err := query.ParseBBox(b.String()); err != nil {
		return fmt.Errorf("box %v: %w", b, err)
	}
	if b.West > b.East {
		return fmt.Errorf("box %v: west is east of east; give a box across the antimeridian as -180..180", b)
	}
	return nil
}

// bboxQuery selects the documents whose box intersects b: their west is at most b's
// east, their east at least b's west, and the same for south and north.
func bboxQuery(b BBox) bq.Query {
	fname := typedPrefix + bboxField
	rng := func(part string, lo, hi *float64) bq.Query {
		yes := true
		q := bleve.NewNumericRangeInclusiveQuery(lo, hi, &yes, &yes)
		q.SetField(bboxPart(fname, part))
		q.SetBoost(filterBoost)
		return q
	}
	f := func(x float64) *float64 { return &x }
	lat := []bq.Query{rng("s", nil, f(b.North)), rng("n", f(b.South), nil)}
	side := func(west, east float64) bq.Query {
		c := bleve.NewConjunctionQuery(append([]bq.Query{rng("w", nil, f(east)), rng("e", f(west), nil)}, lat...)...)
		c.SetBoost(filterBoost)
		return c
	}
	if !b.CrossesAntimeridian() {
		return side(b.West, b.East)
	}
	d := bleve.NewDisjunctionQuery(side(b.West, 180), side(-180, b.East))
	d.SetBoost(filterBoost)
	return d
}

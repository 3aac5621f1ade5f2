// Package crs owns coordinate reference systems for the geo readers: it reads a CRS from
// WKT (the .prj of a shapefile, a GeoPackage's gpkg_spatial_ref_sys), from an EPSG code
// (GeoTIFF keys, GeoJSON, GML) or from the parameters a GeoTIFF's GeoKeys give for a
// user-defined CRS, names it, identifies its EPSG code when it can, and
// transforms coordinates to WGS84 longitude/latitude so every dataset's bounding box can be
// searched on one map.
//
// Albers comes from github.com/wroge/wgs84; the other methods are written here from IOGP
// Guidance Note 7-2 and Snyder (1987): transverse Mercator (Krüger's series), Lambert
// conformal conic, Lambert azimuthal equal-area, Mercator, Web Mercator, equirectangular,
// oblique (EPSG's and Snyder's) and polar stereographic, sinusoidal and equidistant conic.
// Datum shifts follow what PROJ does without grid files, so that results
// agree with GDAL to well under a metre: the EPSG "ballpark" transformations it picks
// (NAD83 and other modern datums: no shift; NAD27: EPSG:1173, -8 160 176 m; ...), or the
// TOWGS84 parameters the WKT carries. A datum we do not know is treated as WGS84, as PROJ's
// ballpark transformation does; Shift says so.
//
// The ESRI-name table (esri.tsv.gz) maps the names ArcGIS writes into .prj files, which carry
// no EPSG code, to their EPSG codes and official names. It is generated from PROJ's proj.db
// by gen/main.go.
package crs

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/wroge/wgs84"
)

// Kind says what sort of coordinates a CRS has.
type Kind string

const (
	Geographic Kind = "geographic" // longitude/latitude in angular units
	Projected  Kind = "projected"  // easting/northing in linear units
	Other      Kind = "other"      // engineering, geocentric, compound we cannot use
)

// CRS is a coordinate reference system as far as sonda needs it: a name, an EPSG code when
// known, and a transformation to WGS84.
type CRS struct {
	Name string `json:"name"`
	EPSG int    `json:"epsg,omitempty"`
	Kind Kind   `json:"kind"`
	// Datum is the geodetic datum's name as written; Shift how it reaches WGS84:
	// "none" (the datum is WGS84 or equivalent within a metre or two), "helmert" (3 or 7
	// parameters), "unknown" (treated as WGS84, like PROJ's ballpark).
	Datum string `json:"datum,omitempty"`
	Shift string `json:"datum_shift,omitempty"`
	// Projection is the projection method ("" for geographic CRSs).
	Projection string `json:"projection,omitempty"`
	// Unsupported says why coordinates cannot be transformed ("" when they can).
	Unsupported string `json:"unsupported,omitempty"`

	unit      float64 // projected: metres per unit; geographic: degrees per unit
	primeMer  float64 // degrees east of Greenwich
	ellipsoid wgs84.Datum
	helmert   *[7]float64
	proj      wgs84.Projection
}

// CanTransform reports whether ToWGS84 works for this CRS.
func (c *CRS) CanTransform() bool {
	return c != nil && c.Unsupported == "" && (c.Kind == Geographic || c.proj != nil)
}

// ErrNoTransform is returned by ToWGS84 for CRSs it cannot transform.
var ErrNoTransform = errors.New("crs: no transformation to WGS84")

var wgs84LonLat = wgs84.LonLat()

// ToWGS84 transforms a coordinate in this CRS to WGS84 longitude and latitude in degrees.
func (c *CRS) ToWGS84(x, y float64) (lon, lat float64, err error) {
	if !c.CanTransform() {
		return 0, 0, ErrNoTransform
	}
	if c.Kind == Geographic {
		lon, lat = x*c.unit+c.primeMer, y*c.unit
	} else {
		lon, lat = c.proj.ToLonLat(x*c.unit, y*c.unit, c.ellipsoid)
		lon += c.primeMer
	}
	if c.helmert != nil {
		h := c.helmert
		d := wgs84.Helmert(c.ellipsoid.A(), c.ellipsoid.Fi(), h[0], h[1], h[2], h[3], h[4], h[5], h[6])
		gx, gy, gz := d.LonLat().ToWGS84(lon, lat, 0)
		lon, lat, _ = wgs84LonLat.FromWGS84(gx, gy, gz)
	}
	if math.Abs(lon) > 180+1e-9 {
		// Longitudes measured from a central meridian (around a pole, or a cone) come out
		// beyond ±180°: wrap them as PROJ does. The margin keeps ±180° itself, which unit
		// conversions leave a rounding error beyond, where the file put it.
		lon = math.Remainder(lon, 360)
	}
	if math.IsNaN(lon) || math.IsNaN(lat) || math.Abs(lat) > 90.000001 {
		return lon, lat, fmt.Errorf("crs: (%g, %g) in %s is outside the projection's domain", x, y, c.Name)
	}
	return lon, lat, nil
}

// WGS84 is EPSG:4326.
func WGS84() *CRS { c, _ := FromEPSG(4326); return c }

// ParseWKT reads a CRS from WKT 1 (OGC or ESRI) or the WKT 2 subset that GeoPackages and
// GDAL write. A CRS it understands but cannot transform comes back with Unsupported set
// and no error; an error means the text is not a CRS.
func ParseWKT(text string) (*CRS, error) {
	root, err := parseWKT(text)
	if err != nil {
		return nil, fmt.Errorf("crs: %w", err)
	}
	c, err := fromNode(root)
	if err != nil {
		return nil, fmt.Errorf("crs: %w", err)
	}
	if c.EPSG == 0 {
		c.EPSG = identify(root, c)
	}
	if c.EPSG != 0 {
		if name := epsgName(c.EPSG); name != "" {
			c.Name = name
		}
	}
	return c, nil
}

func fromNode(n *node) (*CRS, error) {
	switch n.name {
	case "GEOGCS", "GEOGCRS", "GEODCRS", "BASEGEOGCRS", "BASEGEODCRS":
		if n.child("CS") != nil && strings.EqualFold(n.child("CS").str(0), "cartesian") {
			return &CRS{Name: n.str(0), Kind: Other, Unsupported: "geocentric CRS"}, nil
		}
		return geographic(n)
	case "PROJCS", "PROJCRS":
		return projected(n)
	case "GEOCCS":
		return &CRS{Name: n.str(0), Kind: Other, Unsupported: "geocentric CRS", EPSG: n.authority()}, nil
	case "COMPD_CS", "COMPOUNDCRS":
		for _, k := range n.kids { // the horizontal part decides
			switch k.name {
			case "GEOGCS", "GEOGCRS", "GEODCRS", "PROJCS", "PROJCRS":
				return fromNode(k)
			}
		}
		return nil, fmt.Errorf("compound CRS %q without a horizontal part", n.str(0))
	case "LOCAL_CS", "ENGCRS", "ENGINEERINGCRS":
		return &CRS{Name: n.str(0), Kind: Other, Unsupported: "local (engineering) CRS"}, nil
	}
	return nil, fmt.Errorf("%s is not a coordinate reference system WKT keyword", n.name)
}

func geographic(n *node) (*CRS, error) {
	c := &CRS{Name: n.str(0), Kind: Geographic, EPSG: n.authority(), unit: 1}
	if err := c.setDatum(n); err != nil {
		return nil, err
	}
	if u := n.child("UNIT", "ANGLEUNIT"); u != nil {
		if rad, ok := u.num(1); ok && rad > 0 {
			c.unit = rad * 180 / math.Pi
		}
	} else if cs := n.child("CS"); cs != nil { // WKT 2 puts units on the axes
		for _, ax := range n.children("AXIS") {
			if u := ax.child("ANGLEUNIT", "UNIT"); u != nil {
				if rad, ok := u.num(1); ok && rad > 0 {
					c.unit = rad * 180 / math.Pi
				}
			}
		}
	}
	if pm := n.child("PRIMEM"); pm != nil {
		if v, ok := pm.num(1); ok {
			pmUnit := c.unit
			if u := pm.child("ANGLEUNIT", "UNIT"); u != nil {
				if rad, ok := u.num(1); ok && rad > 0 {
					pmUnit = rad * 180 / math.Pi
				}
			}
			c.primeMer = v * pmUnit
		}
	}
	return c, nil
}

// setDatum reads DATUM (or WKT 2's ENSEMBLE) with its ellipsoid and TOWGS84.
func (c *CRS) setDatum(n *node) error {
	d := n.child("DATUM", "ENSEMBLE", "GEODETICDATUM", "TRF")
	if d == nil {
		return fmt.Errorf("geographic CRS %q has no DATUM", n.str(0))
	}
	c.Datum = d.str(0)
	a, rf := 6378137.0, 298.257223563
	if sph := d.child("SPHEROID", "ELLIPSOID"); sph != nil {
		va, ok1 := sph.num(1)
		vrf, ok2 := sph.num(2)
		if !ok1 || !ok2 || va <= 0 || vrf < 0 {
			return fmt.Errorf("datum %q: ellipsoid %q has no usable axis and inverse flattening", c.Datum, sph.str(0))
		}
		if u := sph.child("LENGTHUNIT", "UNIT"); u != nil {
			if m, ok := u.num(1); ok && m > 0 {
				va *= m
			}
		}
		a, rf = va, vrf
	}
	c.ellipsoid = spheroidDatum(a, rf)
	if tw := d.child("TOWGS84"); tw != nil {
		var h [7]float64
		for i := range h {
			h[i], _ = tw.num(i)
		}
		c.setTOWGS84(h, a, rf)
		return nil
	}
	known, ok := datumShifts[datumKey(c.Datum)]
	if !ok && c.EPSG != 0 {
		known, ok = datumByGeogEPSG[c.EPSG]
	}
	switch {
	case ok:
		c.setShift(known)
	default:
		c.Shift = "unknown"
	}
	return nil
}

// setTOWGS84 applies an explicit shift to WGS 84 from a datum on the ellipsoid (a, rf).
func (c *CRS) setTOWGS84(h [7]float64, a, rf float64) {
	c.setShift(h)
	if c.helmert == nil && (math.Abs(a-6378137) > 0.5 || math.Abs(rf-298.257223563) > 1e-3) {
		// A zero shift between different ellipsoids still changes latitudes: go through
		// geocentric coordinates, as PROJ does for an explicit TOWGS84.
		c.helmert, c.Shift = &[7]float64{}, "helmert"
	}
}

func (c *CRS) setShift(h [7]float64) {
	if h == [7]float64{} {
		c.Shift = "none"
		return
	}
	c.Shift, c.helmert = "helmert", &h
}

// spheroidDatum is an ellipsoid without a shift; rf 0 means a sphere.
func spheroidDatum(a, rf float64) wgs84.Datum {
	if rf == 0 {
		rf = math.Inf(1) // wgs84 computes f = 1/fi: a sphere has f = 0
	}
	return wgs84.Helmert(a, rf, 0, 0, 0, 0, 0, 0, 0)
}

func projected(n *node) (*CRS, error) {
	base := n.child("GEOGCS", "BASEGEOGCRS", "BASEGEODCRS", "GEOGCRS")
	if base == nil {
		return nil, fmt.Errorf("projected CRS %q has no geographic base CRS", n.str(0))
	}
	g, err := geographic(base)
	if err != nil {
		return nil, err
	}
	c := &CRS{Name: n.str(0), Kind: Projected, EPSG: n.authority(), Datum: g.Datum, Shift: g.Shift,
		ellipsoid: g.ellipsoid, helmert: g.helmert, primeMer: g.primeMer, unit: 1}
	// WKT 1: PROJECTION + PARAMETERs + UNIT at the top; WKT 2: CONVERSION[METHOD, PARAMETER...].
	holder := n
	method := n.child("PROJECTION")
	if conv := n.child("CONVERSION"); conv != nil {
		holder, method = conv, conv.child("METHOD")
	}
	if u := n.child("UNIT", "LENGTHUNIT"); u != nil {
		if m, ok := u.num(1); ok && m > 0 {
			c.unit = m
		}
	} else {
		for _, ax := range n.children("AXIS") {
			if u := ax.child("LENGTHUNIT", "UNIT"); u != nil {
				if m, ok := u.num(1); ok && m > 0 {
					c.unit = m
				}
			}
		}
	}
	if method == nil {
		c.Unsupported = "no projection method"
		return c, nil
	}
	c.Projection = method.str(0)
	params := map[string]float64{}
	for _, p := range holder.children("PARAMETER") {
		v, ok := p.num(1)
		if !ok {
			continue
		}
		// WKT 2 gives each parameter its unit; WKT 1 uses the CRS's linear unit for
		// distances and the base CRS's angular unit for angles.
		if u := p.child("LENGTHUNIT"); u != nil {
			if m, ok := u.num(1); ok && m > 0 {
				v = v * m / c.unit
			}
		} else if u := p.child("ANGLEUNIT"); u != nil {
			if rad, ok := u.num(1); ok && rad > 0 {
				v = v * rad * 180 / math.Pi
			}
		} else if isAngleParam(normName(p.str(0))) {
			v *= g.unit
		}
		params[normName(p.str(0))] = v
	}
	c.proj, c.Unsupported = projection(normName(c.Projection), params, c.unit)
	return c, nil
}

func isAngleParam(p string) bool {
	return strings.Contains(p, "latitude") || strings.Contains(p, "longitude") || strings.Contains(p, "meridian") ||
		strings.Contains(p, "parallel") || strings.Contains(p, "azimuth") || strings.Contains(p, "angle")
}

// normName lowercases and keeps letters and digits: "D_North_American_1927" and
// "North American Datum 1927" both become comparable keys.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// datumKey is normName without ESRI's "D_" prefix.
func datumKey(s string) string {
	return normName(strings.TrimPrefix(strings.TrimPrefix(s, "D_"), "d_"))
}

// Pole is where a projection puts a geographic pole: X, Y in the CRS's units, Lat ±90.
type Pole struct{ X, Y, Lat float64 }

// Poles lists the poles that the projection maps to a single point (polar and oblique
// azimuthal projections, transverse Mercator, the apex of a conformal cone, sinusoidal).
// An area around such a point covers the pole though none of its vertices comes near 90°:
// the WGS 84 box of a polygon or raster that contains it must reach the pole and span every
// longitude, as GDAL's does. Projections that stretch a pole into a line or an arc
// (Mercator, Albers, equirectangular) or leave it at infinity have none. The point is
// found on the CRS's own ellipsoid: a datum shift moves it by metres, far less than any
// area that can contain it is wide.
func (c *CRS) Poles() []Pole {
	if !c.CanTransform() || c.Kind != Projected {
		return nil
	}
	var out []Pole
	for _, lat := range []float64{90, -90} {
		var first [2]float64
		point := true
		for i, lon := range []float64{-150, -60, 0, 45, 170} {
			x, y := c.proj.FromLonLat(lon, lat, c.ellipsoid)
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || math.Abs(x) > 1e9 || math.Abs(y) > 1e9 {
				point = false
				break
			}
			if i == 0 {
				first = [2]float64{x, y}
			} else if math.Hypot(x-first[0], y-first[1]) > 1e-2 {
				point = false
				break
			}
		}
		if point {
			out = append(out, Pole{X: first[0] / c.unit, Y: first[1] / c.unit, Lat: lat})
		}
	}
	return out
}

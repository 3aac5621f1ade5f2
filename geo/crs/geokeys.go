package crs

import (
	"fmt"
	"math"
	"strconv"
)

// GeoKey IDs (GeoTIFF 1.0 §6.2; OGC GeoTIFF 1.1 §7), and GDAL's GeogTOWGS84GeoKey.
const (
	gkModelType          = 1024
	gkGeographicType     = 2048
	gkGeodeticDatum      = 2050
	gkPrimeMeridian      = 2051
	gkAngularUnits       = 2054
	gkAngularUnitSize    = 2055
	gkEllipsoid          = 2056
	gkSemiMajorAxis      = 2057
	gkSemiMinorAxis      = 2058
	gkInvFlattening      = 2059
	gkPrimeMeridianLong  = 2061
	gkTOWGS84            = 2062
	gkProjectedType      = 3072
	gkProjection         = 3074
	gkCoordTrans         = 3075
	gkLinearUnits        = 3076
	gkLinearUnitSize     = 3077
	userDefined          = 32767
	modelProjected       = 1
	modelGeographic      = 2
	angularUnitDegreeDMS = 9110 // sexagesimal DDD.MMSSsss
)

// geoKeyParams names each projection-parameter GeoKey as the WKT reader's normalized
// parameter names, so both go through projection(). Angle keys are in the geographic CRS's
// angular unit, distance keys in the projected CRS's linear unit.
var geoKeyParams = map[uint16]struct {
	name  string
	angle bool
}{
	3078: {"standardparallel1", true},
	3079: {"standardparallel2", true},
	3080: {"longitudeofnaturalorigin", true},
	3081: {"latitudeofnaturalorigin", true},
	3082: {"falseeasting", false},
	3083: {"falsenorthing", false},
	3084: {"longitudeoffalseorigin", true},
	3085: {"latitudeoffalseorigin", true},
	3086: {"eastingatfalseorigin", false},
	3087: {"northingatfalseorigin", false},
	3088: {"longitudeofcenter", true},
	3089: {"latitudeofcenter", true},
	3090: {"eastingatprojectioncentre", false},
	3091: {"northingatprojectioncentre", false},
	3092: {"scalefactoratnaturalorigin", false},
	3093: {"scalefactoratprojectioncentre", false},
	3094: {"azimuth", true},
	3095: {"straightverticallongitudefrompole", true},
}

// coordTrans maps ProjCoordTransGeoKey values to a method name: the normalized name
// projection() reads, or, for methods sonda has no formulas for, only a readable one.
var coordTrans = map[int]struct{ method, name string }{
	1:  {"transversemercator", "Transverse Mercator"},
	2:  {"", "Transverse Mercator (modified Alaska)"},
	3:  {"", "Oblique Mercator"},
	4:  {"", "Oblique Mercator (Laborde)"},
	5:  {"", "Oblique Mercator (Rosenmund)"},
	6:  {"", "Oblique Mercator (spherical)"},
	7:  {"mercator1sp", "Mercator"}, // 2SP when a standard parallel is given
	8:  {"lambertconformalconic2sp", "Lambert Conic Conformal (2SP)"},
	9:  {"lambertconformalconic1sp", "Lambert Conic Conformal (1SP)"},
	10: {"lambertazimuthalequalarea", "Lambert Azimuthal Equal Area"},
	11: {"albersconicequalarea", "Albers Equal Area"},
	12: {"", "Azimuthal Equidistant"},
	13: {"equidistantconic", "Equidistant Conic"},
	14: {"stereographic", "Stereographic"},
	15: {"polarstereographic", "Polar Stereographic"},
	16: {"obliquestereographic", "Oblique Stereographic"},
	17: {"equirectangular", "Equirectangular"},
	18: {"", "Cassini-Soldner"},
	19: {"", "Gnomonic"},
	20: {"", "Miller Cylindrical"},
	21: {"", "Orthographic"},
	22: {"", "Polyconic"},
	23: {"", "Robinson"},
	24: {"sinusoidal", "Sinusoidal"},
	25: {"", "Van der Grinten"},
	26: {"", "New Zealand Map Grid"},
	27: {"transversemercatorsouthorientated", "Transverse Mercator (South Orientated)"},
}

// linearUnits are ProjLinearUnitsGeoKey codes (EPSG units of length) in metres.
var linearUnits = map[int]float64{
	9001: 1, 9002: 0.3048, 9003: 1200.0 / 3937, 9005: 0.3047972654, 9014: 1.8288, 9030: 1852, 9036: 1000,
	9037: 0.9143917962, 9040: 0.914398414616029, 9041: 0.304799471538676, 9042: 20.1167651215526,
	9093: 1609.344, 9096: 0.9144, 9098: 0.201168,
}

// angularUnits are GeogAngularUnitsGeoKey codes in degrees (9110, sexagesimal, is converted
// value by value).
var angularUnits = map[int]float64{
	9101: 180 / math.Pi, 9102: 1, 9103: 1.0 / 60, 9104: 1.0 / 3600, 9105: 0.9, 9106: 0.9, 9122: 1,
}

// ellipsoidCodes are GeogEllipsoidGeoKey codes: semi-major axis, inverse flattening (0 for
// a sphere).
var ellipsoidCodes = map[int][2]float64{
	7001: ellAiry, 7002: {6377340.189, 299.3249646}, 7003: {6378160, 298.25}, 7004: ellBessel,
	7008: ellClarke, 7012: {6378249.145, 293.465}, 7019: ellGRS80, 7022: ellIntl, 7024: ellKrassov,
	7030: ellWGS84, 7035: {6371000, 0}, 7043: ellWGS72, 7047: {6370997, 0}, 7050: ellGRS67,
}

// datumCodes maps GeogGeodeticDatumGeoKey codes to the geographic CRS of that datum among
// the built-in ones, whose ellipsoid and shift to WGS 84 then apply.
var datumCodes = map[int]int{
	6326: 4326, 6267: 4267, 6269: 4269, 6258: 4258, 6674: 4674, 6618: 4618, 6225: 4225, 6230: 4230,
	6283: 4283, 1168: 7844, 6167: 4167, 6171: 4171, 6277: 4277, 6301: 4301, 6322: 4322, 6284: 4284,
	6612: 4612, 6152: 4152, 1116: 6318, 6140: 4617,
}

// geoKeys are a GeoTIFF's numeric GeoKeys by ID.
type geoKeys map[uint16][]float64

// num is the key's first value; ok is false when it is absent or not a finite number.
func (k geoKeys) num(id uint16) (float64, bool) {
	if v := k[id]; len(v) > 0 && !math.IsNaN(v[0]) && !math.IsInf(v[0], 0) {
		return v[0], true
	}
	return 0, false
}

// code is the key as an EPSG-style code: 0 when absent or not a whole number in range.
func (k geoKeys) code(id uint16) int {
	v, ok := k.num(id)
	if !ok || v != math.Trunc(v) || v < 0 || v > userDefined {
		return 0
	}
	return int(v)
}

// FromGeoKeys reads a CRS that a GeoTIFF defines by its own GeoKeys (ProjectedCSTypeGeoKey
// or GeographicTypeGeoKey 32767, "user-defined"): the projection method and its parameters,
// the units, and the geographic base given by code or by its datum, ellipsoid and prime
// meridian. The projection goes through the same method table as WKT, so a GeoTIFF and a
// .prj of one CRS transform alike. keys are the numeric GeoKeys by ID (a SHORT as its one
// value); name is the file's citation. A CRS it cannot transform comes back with Unsupported
// saying which key stops it; nothing is guessed.
func FromGeoKeys(keys map[uint16][]float64, name string) *CRS {
	k := geoKeys(keys)
	c := &CRS{Name: name, Kind: Other}
	if name == "" {
		c.Name = "user-defined CRS"
	}
	switch m := k.code(gkModelType); m {
	case modelGeographic:
		c.Kind = Geographic
	case modelProjected:
		c.Kind = Projected
	default:
		c.Unsupported = fmt.Sprintf("GeoTIFF model type %d (GTModelTypeGeoKey) is neither projected nor geographic", m)
		return c
	}
	angle, degPerUnit, why := k.angularUnit()
	if why == "" {
		why = c.geogFromKeys(k, angle)
	}
	if why != "" {
		c.Unsupported = why
		return c
	}
	if c.Kind == Geographic {
		c.unit = degPerUnit
		if degPerUnit == 0 {
			c.Unsupported = "geographic coordinates in sexagesimal DDD.MMSS units"
		}
		return c
	}
	c.unit, why = k.linearUnit()
	if why != "" {
		c.Unsupported = why
		return c
	}
	method, params, why := k.projection(angle, c.unit)
	c.Projection = method.name
	if why != "" {
		c.Unsupported = why
		return c
	}
	c.proj, c.Unsupported = projection(method.method, params, c.unit)
	return c
}

// angularUnit gives the conversion of the file's angles to degrees and its factor (0 for
// sexagesimal degrees, which are converted value by value).
func (k geoKeys) angularUnit() (angle func(float64) float64, degPerUnit float64, why string) {
	switch u := k.code(gkAngularUnits); {
	case u == 0:
		degPerUnit = 1
	case u == angularUnitDegreeDMS:
		return fromSexagesimal, 0, ""
	case u == userDefined:
		v, ok := k.num(gkAngularUnitSize)
		if !ok || v <= 0 {
			return nil, 0, "user-defined angular unit without GeogAngularUnitSizeGeoKey"
		}
		degPerUnit = v * 180 / math.Pi
	default:
		f, ok := angularUnits[u]
		if !ok {
			return nil, 0, fmt.Sprintf("angular unit code %d (GeogAngularUnitsGeoKey) is not known", u)
		}
		degPerUnit = f
	}
	return func(v float64) float64 { return v * degPerUnit }, degPerUnit, ""
}

// linearUnit is the projected CRS's unit in metres.
func (k geoKeys) linearUnit() (float64, string) {
	switch u := k.code(gkLinearUnits); {
	case u == 0:
		return 1, ""
	case u == userDefined:
		v, ok := k.num(gkLinearUnitSize)
		if !ok || v <= 0 {
			return 0, "user-defined linear unit without ProjLinearUnitSizeGeoKey"
		}
		return v, ""
	default:
		m, ok := linearUnits[u]
		if !ok {
			return 0, fmt.Sprintf("linear unit code %d (ProjLinearUnitsGeoKey) is not known", u)
		}
		return m, ""
	}
}

// projection reads the method and its parameters (angles in degrees, distances in the CRS's
// unit), or a UTM zone given by ProjectionGeoKey alone.
func (k geoKeys) projection(angle func(float64) float64, unit float64) (method struct{ method, name string }, params map[string]float64, why string) {
	params = map[string]float64{}
	for id, p := range geoKeyParams {
		if v, ok := k.num(id); ok {
			if p.angle {
				v = angle(v)
			}
			params[p.name] = v
		}
	}
	if ct, ok := k.num(gkCoordTrans); ok {
		m, known := coordTrans[int(ct)]
		if !known || ct != math.Trunc(ct) {
			return m, nil, fmt.Sprintf("projection method %g (ProjCoordTransGeoKey) is not a GeoTIFF coordinate transformation", ct)
		}
		if _, sp := params["standardparallel1"]; int(ct) == 7 && sp {
			m.method = "mercator2sp"
		}
		if m.method == "" {
			return m, nil, m.name + " is not supported for reprojection"
		}
		return m, params, ""
	}
	switch proj := k.code(gkProjection); {
	case proj > 16000 && proj <= 16060 || proj > 16100 && proj <= 16160:
		// EPSG's UTM zone conversions (16001-16060 north, 16101-16160 south) on this base.
		zone, fn := proj-16000, 0.0
		if proj > 16100 {
			zone, fn = proj-16100, 10000000
		}
		m := struct{ method, name string }{"transversemercator", fmt.Sprintf("UTM zone %d", zone)}
		return m, map[string]float64{"centralmeridian": float64(6*zone - 183), "scalefactor": 0.9996,
			"falseeasting": 500000 / unit, "falsenorthing": fn / unit}, ""
	case proj != 0 && proj != userDefined:
		return method, nil, "projection EPSG:" + strconv.Itoa(proj) + " (ProjectionGeoKey) has no built-in definition"
	}
	return method, nil, "a user-defined projected CRS without ProjCoordTransGeoKey"
}

// geogFromKeys sets the datum, ellipsoid, shift and prime meridian from the geographic
// GeoKeys, or says why it cannot.
func (c *CRS) geogFromKeys(k geoKeys, angle func(float64) float64) string {
	geog := k.code(gkGeographicType)
	if geog == userDefined {
		geog = 0
	}
	if geog == 0 {
		if d := k.code(gkGeodeticDatum); d != 0 && d != userDefined {
			geog = datumCodes[d] // 0 when not built in: the ellipsoid keys must then say
			if geog == 0 {
				c.Datum = "EPSG datum " + strconv.Itoa(d)
			}
		}
	} else if c.Kind == Geographic {
		c.EPSG = geog
	}
	var a, rf float64
	if geog != 0 {
		g, ok := geographicCodes[geog]
		if !ok {
			return "geographic CRS EPSG:" + strconv.Itoa(geog) + " (GeographicTypeGeoKey) has no built-in definition"
		}
		c.Datum, a, rf = g.datum, g.ell[0], g.ell[1]
		if c.EPSG != 0 {
			c.Name = g.name
		}
	} else {
		var why string
		if a, rf, why = k.ellipsoid(); why != "" {
			return why
		}
		if c.Datum == "" {
			c.Datum = "user-defined"
		}
	}
	c.ellipsoid = spheroidDatum(a, rf)
	if h := k[gkTOWGS84]; len(h) == 3 || len(h) == 7 {
		var p [7]float64
		copy(p[:], h)
		c.setTOWGS84(p, a, rf)
	} else if sh, ok := datumByGeogEPSG[geog]; ok && geog != 0 {
		c.setShift(sh)
	} else {
		c.Shift = "unknown" // treated as WGS 84, as PROJ's ballpark transformation does
	}
	switch pm := k.code(gkPrimeMeridian); {
	case pm == 0 && len(k[gkPrimeMeridianLong]) == 0, pm == 8901:
	case pm == 8903: // Paris, 2.5969213 grads
		c.primeMer = 2.33722917
	default:
		v, ok := k.num(gkPrimeMeridianLong)
		if !ok {
			return "prime meridian code " + strconv.Itoa(pm) + " (GeogPrimeMeridianGeoKey) is not known"
		}
		c.primeMer = angle(v)
	}
	return ""
}

// ellipsoid reads the ellipsoid by code or by its axes: semi-major axis and inverse
// flattening (0 for a sphere).
func (k geoKeys) ellipsoid() (a, rf float64, why string) {
	if e := k.code(gkEllipsoid); e != 0 && e != userDefined {
		ell, ok := ellipsoidCodes[e]
		if !ok {
			return 0, 0, "ellipsoid code " + strconv.Itoa(e) + " (GeogEllipsoidGeoKey) is not known"
		}
		return ell[0], ell[1], ""
	}
	a, ok := k.num(gkSemiMajorAxis)
	if !ok || a <= 0 {
		return 0, 0, "no ellipsoid: neither GeogEllipsoidGeoKey nor GeogSemiMajorAxisGeoKey"
	}
	if inv, ok := k.num(gkInvFlattening); ok && (inv == 0 || inv > 1) {
		return a, inv, ""
	}
	if b, ok := k.num(gkSemiMinorAxis); ok && b > 0 && b <= a {
		if b == a {
			return a, 0, ""
		}
		return a, a / (a - b), ""
	}
	return 0, 0, "no flattening: neither GeogInvFlatteningGeoKey nor GeogSemiMinorAxisGeoKey"
}

// fromSexagesimal converts EPSG unit 9110, DDD.MMSSsss, to degrees.
func fromSexagesimal(v float64) float64 {
	sign := 1.0
	if v < 0 {
		sign, v = -1, -v
	}
	d := math.Floor(v)
	rest := (v - d) * 100
	m := math.Floor(rest + 1e-9)
	sec := (rest - m) * 100
	return sign * (d + m/60 + sec/3600)
}

package crs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:embed esri.tsv.gz
var esriTSV []byte

// names is the decoded ESRI-name table: EPSG code → official name, and normalized official
// or ESRI name → code.
var names = sync.OnceValue(func() (t struct {
	byCode map[int]string
	byName map[string]int
}) {
	t.byCode, t.byName = map[int]string{}, map[string]int{}
	zr, err := gzip.NewReader(bytes.NewReader(esriTSV))
	if err != nil {
		panic("crs: embedded esri.tsv.gz is corrupt: " + err.Error())
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			continue
		}
		code, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		t.byCode[code] = f[1]
		for _, n := range f[1:] {
			if k := normName(n); k != "" {
				if _, dup := t.byName[k]; !dup {
					t.byName[k] = code
				}
			}
		}
	}
	return t
})

// epsgName is the official name of an EPSG CRS code ("" when unknown).
func epsgName(code int) string {
	if d, ok := builtin(code); ok {
		return d.name
	}
	return names().byCode[code]
}

// identify finds the EPSG code of a CRS given without one: by its name (EPSG's or ESRI's),
// then, for a geographic CRS, by its datum.
func identify(root *node, c *CRS) int {
	if code, ok := names().byName[normName(root.str(0))]; ok {
		return code
	}
	if c.Kind == Geographic && c.primeMer == 0 && c.unit > 0.99999999 && c.unit < 1.00000001 {
		switch datumKey(c.Datum) {
		case "wgs1984", "worldgeodeticsystem1984", "wgs84", "worldgeodeticsystem1984ensemble":
			return 4326
		case "northamerican1927", "northamericandatum1927", "nad27":
			return 4267
		case "northamerican1983", "northamericandatum1983", "nad83":
			return 4269
		case "sirgas2000", "sistemadereferenciageocentricoparalasamericas2000":
			return 4674
		case "southamerican1969", "southamericandatum1969", "sad69":
			return 4618
		case "etrs1989", "europeanterrestrialreferencesystem1989", "etrs89":
			return 4258
		}
	}
	return 0
}

// ellipsoids used by the built-in definitions: semi-major axis, inverse flattening.
var (
	ellWGS84   = [2]float64{6378137, 298.257223563}
	ellGRS80   = [2]float64{6378137, 298.257222101}
	ellClarke  = [2]float64{6378206.4, 294.9786982138982}
	ellGRS67   = [2]float64{6378160, 298.25}
	ellIntl    = [2]float64{6378388, 297}
	ellAiry    = [2]float64{6377563.396, 299.3249646}
	ellBessel  = [2]float64{6377397.155, 299.1528128}
	ellWGS72   = [2]float64{6378135, 298.26}
	ellKrassov = [2]float64{6378245, 298.3}
)

// geog is a built-in geographic CRS.
type geog struct {
	name  string
	datum string
	ell   [2]float64
}

var geographicCodes = map[int]geog{
	4326: {"WGS 84", "WGS_1984", ellWGS84},
	4267: {"NAD27", "North_American_1927", ellClarke},
	4269: {"NAD83", "North_American_1983", ellGRS80},
	4258: {"ETRS89", "ETRS_1989", ellGRS80},
	4674: {"SIRGAS 2000", "SIRGAS_2000", ellGRS80},
	4618: {"SAD69", "South_American_1969", ellGRS67},
	4225: {"Corrego Alegre 1970-72", "Corrego_Alegre", ellIntl},
	4230: {"ED50", "European_1950", ellIntl},
	4283: {"GDA94", "GDA_1994", ellGRS80},
	7844: {"GDA2020", "GDA2020", ellGRS80},
	4167: {"NZGD2000", "NZGD2000", ellGRS80},
	4171: {"RGF93 v1", "RGF_1993", ellGRS80},
	4277: {"OSGB36", "OSGB_1936", ellAiry},
	4301: {"Tokyo", "Tokyo", ellBessel},
	4322: {"WGS 72", "WGS_1972", ellWGS72},
	4284: {"Pulkovo 1942", "Pulkovo_1942", ellKrassov},
	4612: {"JGD2000", "JGD2000", ellGRS80},
	4152: {"NAD83(HARN)", "NAD83_HARN", ellGRS80},
	6318: {"NAD83(2011)", "NAD83_2011", ellGRS80},
	4617: {"NAD83(CSRS)", "North_American_1983_CSRS", ellGRS80},
}

// definition is a built-in CRS: a geographic one, or a projection on a geographic base.
type definition struct {
	name   string
	base   int    // geographic EPSG code (the CRS itself when method is "")
	method string // normalized projection method
	params map[string]float64
}

func utm(base int, baseName string, zone int, south bool) definition {
	fn, hemi := 0.0, "N"
	if south {
		fn, hemi = 10000000, "S"
	}
	return definition{
		name: fmt.Sprintf("%s / UTM zone %d%s", baseName, zone, hemi), base: base, method: "transversemercator",
		params: map[string]float64{"centralmeridian": float64(6*zone - 183), "scalefactor": 0.9996, "falseeasting": 500000, "falsenorthing": fn},
	}
}

// builtin returns the definition of an EPSG code sonda knows without a WKT: the common
// geographic CRSs, Web and World Mercator, the UTM families of the datums used in the
// Americas, Europe and Australia, and the polar grids of sea-ice and Antarctic data. Readers whose files name a CRS only by code (GeoTIFF,
// GeoJSON, GML) rely on it.
func builtin(code int) (definition, bool) {
	if g, ok := geographicCodes[code]; ok {
		return definition{name: g.name, base: code}, true
	}
	z := func(first int) int { return code - first }
	switch {
	case code == 3857 || code == 900913 || code == 3785 || code == 102100:
		return definition{name: "WGS 84 / Pseudo-Mercator", base: 4326, method: "popularvisualisationpseudomercator", params: map[string]float64{}}, true
	case code == 3395:
		return definition{name: "WGS 84 / World Mercator", base: 4326, method: "mercator1sp", params: map[string]float64{"scalefactor": 1}}, true
	case code > 32600 && code <= 32660:
		return utm(4326, "WGS 84", z(32600), false), true
	case code > 32700 && code <= 32760:
		return utm(4326, "WGS 84", z(32700), true), true
	case code > 26900 && code <= 26923:
		return utm(4269, "NAD83", z(26900), false), true
	case code > 26700 && code <= 26722:
		return utm(4267, "NAD27", z(26700), false), true
	case code >= 25828 && code <= 25838:
		return utm(4258, "ETRS89", z(25800), false), true
	case code >= 31965 && code <= 31976:
		return utm(4674, "SIRGAS 2000", code-31965+11, false), true
	case code >= 31977 && code <= 31985:
		return utm(4674, "SIRGAS 2000", code-31977+17, true), true
	case code == 6210 || code == 6211:
		return utm(4674, "SIRGAS 2000", code-6210+23, false), true
	case code >= 29168 && code <= 29172:
		return utm(4618, "SAD69", code-29168+18, false), true
	case code >= 29187 && code <= 29195:
		return utm(4618, "SAD69", code-29187+17, true), true
	case code >= 23028 && code <= 23038:
		return utm(4230, "ED50", z(23000), false), true
	case code >= 28348 && code <= 28358:
		d := utm(4283, "GDA94", z(28300), true)
		d.name = fmt.Sprintf("GDA94 / MGA zone %d", z(28300))
		return d, true
	case code == 27700:
		return definition{name: "OSGB36 / British National Grid", base: 4277, method: "transversemercator",
			params: map[string]float64{"centralmeridian": -2, "latitudeoforigin": 49, "scalefactor": 0.9996012717, "falseeasting": 400000, "falsenorthing": -100000}}, true
	case code == 2154:
		return definition{name: "RGF93 v1 / Lambert-93", base: 4171, method: "lambertconformalconic2sp",
			params: map[string]float64{"centralmeridian": 3, "latitudeoforigin": 46.5, "standardparallel1": 49, "standardparallel2": 44, "falseeasting": 700000, "falsenorthing": 6600000}}, true
	case code == 3035:
		return definition{name: "ETRS89-extended / LAEA Europe", base: 4258, method: "lambertazimuthalequalarea",
			params: map[string]float64{"longitudeofcenter": 10, "latitudeofcenter": 52, "falseeasting": 4321000, "falsenorthing": 3210000}}, true
	// The polar grids of sea-ice and Antarctic data (NSIDC, UPS, EASE-Grid 2.0).
	case code == 3413 || code == 3976 || code == 3031 || code == 3995:
		d := map[int]struct {
			name     string
			ts, lon0 float64
		}{
			3413: {"WGS 84 / NSIDC Sea Ice Polar Stereographic North", 70, -45},
			3976: {"WGS 84 / NSIDC Sea Ice Polar Stereographic South", -70, 0},
			3031: {"WGS 84 / Antarctic Polar Stereographic", -71, 0},
			3995: {"WGS 84 / Arctic Polar Stereographic", 71, 0},
		}[code]
		return definition{name: d.name, base: 4326, method: "polarstereographicvariantb",
			params: map[string]float64{"latitudeofstandardparallel": d.ts, "longitudeoforigin": d.lon0}}, true
	case code == 32661 || code == 32761:
		name, lat := "WGS 84 / UPS North (N,E)", 90.0
		if code == 32761 {
			name, lat = "WGS 84 / UPS South (N,E)", -90
		}
		return definition{name: name, base: 4326, method: "polarstereographicvarianta",
			params: map[string]float64{"latitudeofnaturalorigin": lat, "scalefactoratnaturalorigin": 0.994, "falseeasting": 2000000, "falsenorthing": 2000000}}, true
	case code == 6931 || code == 6932:
		name, lat := "WGS 84 / NSIDC EASE-Grid 2.0 North", 90.0
		if code == 6932 {
			name, lat = "WGS 84 / NSIDC EASE-Grid 2.0 South", -90
		}
		return definition{name: name, base: 4326, method: "lambertazimuthalequalarea", params: map[string]float64{"latitudeofnaturalorigin": lat}}, true
	case code == 5070:
		return definition{name: "NAD83 / Conus Albers", base: 4269, method: "albersconicequalarea",
			params: map[string]float64{"longitudeofcenter": -96, "latitudeofcenter": 23, "standardparallel1": 29.5, "standardparallel2": 45.5}}, true
	}
	return definition{}, false
}

// FromEPSG returns the CRS of an EPSG code. Codes outside the built-in set (see builtin)
// come back named, when the name table knows them, with Unsupported set; an error means the
// code is unknown altogether.
func FromEPSG(code int) (*CRS, error) {
	d, ok := builtin(code)
	if !ok {
		if name := names().byCode[code]; name != "" {
			return &CRS{Name: name, EPSG: code, Kind: Other, Unsupported: "EPSG:" + strconv.Itoa(code) + " has no built-in definition; give its WKT"}, nil
		}
		return nil, fmt.Errorf("crs: unknown EPSG code %d", code)
	}
	g := geographicCodes[d.base]
	c := &CRS{Name: d.name, EPSG: code, Kind: Geographic, Datum: g.datum, unit: 1, ellipsoid: spheroidDatum(g.ell[0], g.ell[1])}
	if h, ok := datumByGeogEPSG[d.base]; ok {
		c.setShift(h)
	} else {
		c.Shift = "unknown"
	}
	if d.method != "" {
		c.Kind, c.Projection = Projected, d.method
		c.proj, c.Unsupported = projection(d.method, d.params, 1)
	}
	return c, nil
}

// ParseCode reads a CRS reference as files write it: "EPSG:4326", "urn:ogc:def:crs:EPSG::4326",
// "http://www.opengis.net/def/crs/EPSG/0/4326", "http://www.opengis.net/gml/srs/epsg.xml#4326",
// "urn:ogc:def:crs:OGC:1.3:CRS84" (WGS 84 in longitude/latitude order). ok is false when the
// text names no EPSG code.
func ParseCode(ref string) (code int, ok bool) {
	r := strings.TrimSpace(ref)
	lower := strings.ToLower(r)
	if strings.HasSuffix(lower, "crs84") || strings.HasSuffix(lower, "crs:84") {
		return 4326, true
	}
	if !strings.Contains(lower, "epsg") {
		return 0, false
	}
	i := len(r)
	for i > 0 && r[i-1] >= '0' && r[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(r[i:])
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

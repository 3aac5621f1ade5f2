package crs

import (
	"math"
	"strings"
	"testing"
)

// keys builds a GeoKey set from id, value pairs (one value each).
func keys(pairs ...float64) map[uint16][]float64 {
	k := map[uint16][]float64{}
	for i := 0; i+1 < len(pairs); i += 2 {
		k[uint16(pairs[i])] = []float64{pairs[i+1]}
	}
	return k
}

// TestFromGeoKeys: GeoKeys and the WKT (or EPSG code) of the same CRS must transform alike,
// whatever units and base the keys use.
func TestFromGeoKeys(t *testing.T) {
	// nybbPRJ's Long Island state plane, in US feet on NAD83, as GeoKeys.
	longIsland := keys(1024, 1, 2048, 4269, 3072, 32767, 3074, 32767, 3075, 8, 3076, 9003,
		3078, 40.66666666666666, 3079, 41.03333333333333, 3084, -74, 3085, 40.16666666666666, 3086, 984250, 3087, 0)
	// The same with angles in sexagesimal degrees (EPSG unit 9110: DDD.MMSS).
	longIslandDMS := keys(1024, 1, 2048, 4269, 3072, 32767, 3074, 32767, 3075, 8, 3076, 9003, 2054, 9110,
		3078, 40.40, 3079, 41.02, 3084, -74, 3085, 40.10, 3086, 984250, 3087, 0)
	// A user-defined geographic CRS: International 1924 with a TOWGS84 (GDAL's key 2062).
	intl := keys(1024, 2, 2048, 32767, 2050, 32767, 2054, 9102, 2056, 7022)
	intl[2062] = []float64{-87, -98, -121}
	intlWKT := `GEOGCS["x",DATUM["y",SPHEROID["International 1924",6378388,297],TOWGS84[-87,-98,-121,0,0,0,0]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`
	// UTM zone 18N by ProjectionGeoKey alone, on NAD27 (EPSG:26718).
	utm := keys(1024, 1, 2048, 4267, 3072, 32767, 3074, 16018)
	// GDAL's keys for RD New's projection on the Bessel ellipsoid given by its axes.
	rd := keys(1024, 1, 2048, 32767, 2050, 32767, 2056, 32767, 2057, 6377397.155, 2059, 299.1528128, 2061, 0,
		3072, 32767, 3074, 32767, 3075, 16, 3076, 9001, 3080, 5.38763888888889, 3081, 52.1561605555556,
		3082, 155000, 3083, 463000, 3092, 0.9999079)
	rdWKT := `PROJCS["x",GEOGCS["g",DATUM["d",SPHEROID["Bessel 1841",6377397.155,299.1528128]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Oblique_Stereographic"],PARAMETER["latitude_of_origin",52.1561605555556],PARAMETER["central_meridian",5.38763888888889],PARAMETER["scale_factor",0.9999079],PARAMETER["false_easting",155000],PARAMETER["false_northing",463000],UNIT["metre",1]]`

	fromWKT := func(s string) *CRS {
		c, err := ParseWKT(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fromCode := func(code int) *CRS {
		c, err := FromEPSG(code)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name  string
		keys  map[uint16][]float64
		same  *CRS
		x, y  float64
		shift string
	}{
		{"LCC 2SP in US feet", longIsland, fromWKT(nybbPRJ), 980000, 200000, "none"},
		{"LCC 2SP, sexagesimal angles", longIslandDMS, fromWKT(nybbPRJ), 980000, 200000, "none"},
		{"geographic, ellipsoid code and TOWGS84", intl, fromWKT(intlWKT), 10, 50, "helmert"},
		{"UTM zone by ProjectionGeoKey", utm, fromCode(26718), 500000, 4500000, "helmert"},
		{"oblique stereographic, ellipsoid by its axes", rd, fromWKT(rdWKT), 200000, 500000, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FromGeoKeys(tt.keys, "")
			if !c.CanTransform() {
				t.Fatalf("not readable: %s", c.Unsupported)
			}
			if c.Shift != tt.shift {
				t.Errorf("datum shift %q, want %q", c.Shift, tt.shift)
			}
			lon, lat, err := c.ToWGS84(tt.x, tt.y)
			if err != nil {
				t.Fatal(err)
			}
			wantLon, wantLat, err := tt.same.ToWGS84(tt.x, tt.y)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lon-wantLon) > 1e-9 || math.Abs(lat-wantLat) > 1e-9 {
				t.Errorf("(%g, %g) → (%.10f, %.10f); the same CRS from WKT or code gives (%.10f, %.10f)", tt.x, tt.y, lon, lat, wantLon, wantLat)
			}
		})
	}
}

// TestFromGeoKeysRefuses: keys sonda cannot read come back as a CRS with the reason, never
// as a transformation.
func TestFromGeoKeysRefuses(t *testing.T) {
	base := []float64{1024, 1, 2048, 4326, 3072, 32767, 3074, 32767}
	with := func(more ...float64) map[uint16][]float64 {
		return keys(append(append([]float64{}, base...), more...)...)
	}
	for _, tt := range []struct {
		keys map[uint16][]float64
		want string
	}{
		{with(3075, 3), "Oblique Mercator is not supported"},
		{with(3075, 99), "not a GeoTIFF coordinate transformation"},
		{with(3075, 23), "Robinson is not supported"},
		{with(), "without ProjCoordTransGeoKey"},
		{with(3075, 1, 3076, 9999), "linear unit code 9999"},
		{with(3075, 1, 3076, 32767), "without ProjLinearUnitSizeGeoKey"},
		{with(3075, 1, 2054, 9999), "angular unit code 9999"},
		{keys(1024, 1, 2048, 4289, 3072, 32767, 3075, 1), "EPSG:4289 (GeographicTypeGeoKey) has no built-in definition"},
		{keys(1024, 1, 2048, 32767, 3072, 32767, 3075, 1), "no ellipsoid"},
		{keys(1024, 1, 2048, 32767, 2056, 7999, 3072, 32767, 3075, 1), "ellipsoid code 7999"},
		{keys(1024, 1, 2048, 32767, 2057, 6378137, 3072, 32767, 3075, 1), "no flattening"},
		{keys(1024, 1, 2048, 4326, 2051, 8999, 3072, 32767, 3075, 1), "prime meridian code 8999"},
		{keys(1024, 1, 2048, 4326, 3072, 32767, 3074, 19914), "EPSG:19914 (ProjectionGeoKey)"},
		{keys(1024, 3), "model type 3"},
	} {
		c := FromGeoKeys(tt.keys, "")
		if c.CanTransform() || !strings.Contains(c.Unsupported, tt.want) {
			t.Errorf("%v: CanTransform %v, Unsupported %q; want a refusal saying %q", tt.keys, c.CanTransform(), c.Unsupported, tt.want)
		}
		if c.Kind == Projected && c.EPSG != 0 {
			t.Errorf("%v: a user-defined CRS got EPSG:%d", tt.keys, c.EPSG)
		}
	}
}

func TestFromSexagesimal(t *testing.T) {
	for in, want := range map[float64]float64{40.40: 40 + 40.0/60, -74.3015: -(74 + 30.0/60 + 15.0/3600), 52.0922178: 52 + 9.0/60 + 22.178/3600, 0: 0} {
		if got := fromSexagesimal(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("fromSexagesimal(%v) = %.10f, want %.10f", in, got, want)
		}
	}
}

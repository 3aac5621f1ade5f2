package crs

import (
	"math"
	"strings"
	"testing"
)

// Reference values: GDAL 3.6 / PROJ 9.1 without grid files,
// `echo "X Y" | gdaltransform -s_srs EPSG:N -t_srs EPSG:4326 -output_xy`.
func TestFromEPSGAgreesWithPROJ(t *testing.T) {
	tests := []struct {
		code             int
		x, y             float64
		wantLon, wantLat float64
	}{
		{4326, -46.6, -23.5, -46.6, -23.5},
		{4267, -71.0, 42.3, -70.9994600204109, 42.2999726416334},
		{31983, 333000, 7394000, -46.636185619777, -23.5557823507569},
		{3857, -5000000, -2700000, -44.9157642059761, -23.5609624237703},
		{3395, -5000000, -2700000, -44.9157642059761, -23.7022685386793},
		{29193, 333000, 7394000, -46.6366321799314, -23.5561905436584},
		// Not 27700: without its OSTN15 grid PROJ falls back to no datum shift at all.
		{2154, 650000, 6860000, 2.31879059703776, 48.838110122583},
		{3035, 4000000, 3000000, 5.51779621244204, 50.0241187585419},
		{5070, 1000000, 2000000, -84.0773326312141, 40.4481801217},
		{3413, 1000000, -1500000, -11.3099324740202, 73.4690719610913},
		{3976, 1000000, -1500000, 146.3099324740200, -73.4690719610913},
		{3031, 1000000, -1500000, 146.3099324740200, -73.5178836452227},
		{3995, 1000000, -1500000, 33.6900675259798, 73.5178836452227},
		{32661, 2500000, 1500000, 45, 83.6373175610571},
		{32761, 2500000, 1500000, 135, -83.6373175610571},
		{6931, 1000000, -1500000, 33.6900675259798, 73.8015348680469},
		{6932, 1000000, -1500000, 146.3099324740200, -73.8015348680469},
	}
	for _, tt := range tests {
		c, err := FromEPSG(tt.code)
		if err != nil {
			t.Fatalf("EPSG:%d: %v", tt.code, err)
		}
		lon, lat, err := c.ToWGS84(tt.x, tt.y)
		if err != nil {
			t.Fatalf("EPSG:%d: %v", tt.code, err)
		}
		if math.Abs(lon-tt.wantLon) > 1e-6 || math.Abs(lat-tt.wantLat) > 1e-6 {
			t.Errorf("EPSG:%d (%g, %g) → (%.9f, %.9f), PROJ says (%.9f, %.9f)", tt.code, tt.x, tt.y, lon, lat, tt.wantLon, tt.wantLat)
		}
	}
}

const nybbPRJ = `PROJCS["NAD_1983_StatePlane_New_York_Long_Island_FIPS_3104_Feet",GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",984250.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-74.0],PARAMETER["Standard_Parallel_1",40.66666666666666],PARAMETER["Standard_Parallel_2",41.03333333333333],PARAMETER["Latitude_Of_Origin",40.16666666666666],UNIT["Foot_US",0.3048006096012192]]`

func TestParseWKT(t *testing.T) {
	tests := []struct {
		name, wkt        string
		wantName         string
		wantEPSG         int
		wantKind         Kind
		x, y             float64
		wantLon, wantLat float64 // PROJ's answer (see above); NaN: not transformable
	}{
		{"esri geographic", `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`,
			"WGS 84", 4326, Geographic, 10, 20, 10, 20},
		{"esri NAD27", `GEOGCS["GCS_North_American_1927",DATUM["D_North_American_1927",SPHEROID["Clarke_1866",6378206.4,294.9786982]],PRIMEM["Greenwich",0],UNIT["Degree",0.017453292519943295]]`,
			"NAD27", 4267, Geographic, -71.0, 42.3, -70.9994600204109, 42.2999726416334},
		{"esri state plane feet", nybbPRJ, "NAD83 / New York Long Island (ftUS)", 2263, Projected, 980000, 200000, -74.0153310153193, 40.7156294772437},
		{"ogc with authority", `PROJCS["SIRGAS 2000 / UTM zone 23S",GEOGCS["SIRGAS 2000",DATUM["Sistema_de_Referencia_Geocentrico_para_las_AmericaS_2000",SPHEROID["GRS 1980",6378137,298.257222101,AUTHORITY["EPSG","7019"]],TOWGS84[0,0,0,0,0,0,0],AUTHORITY["EPSG","6674"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4674"]],PROJECTION["Transverse_Mercator"],PARAMETER["latitude_of_origin",0],PARAMETER["central_meridian",-45],PARAMETER["scale_factor",0.9996],PARAMETER["false_easting",500000],PARAMETER["false_northing",10000000],UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["Easting",EAST],AXIS["Northing",NORTH],AUTHORITY["EPSG","31983"]]`,
			"SIRGAS 2000 / UTM zone 23S", 31983, Projected, 333000, 7394000, -46.636185619777, -23.5557823507569},
		{"wkt2 geographic", `GEOGCRS["WGS 84",ENSEMBLE["World Geodetic System 1984 ensemble",MEMBER["World Geodetic System 1984 (Transit)"],ELLIPSOID["WGS 84",6378137,298.257223563,LENGTHUNIT["metre",1]],ENSEMBLEACCURACY[2.0]],PRIMEM["Greenwich",0,ANGLEUNIT["degree",0.0174532925199433]],CS[ellipsoidal,2],AXIS["geodetic latitude (Lat)",north,ORDER[1],ANGLEUNIT["degree",0.0174532925199433]],AXIS["geodetic longitude (Lon)",east,ORDER[2],ANGLEUNIT["degree",0.0174532925199433]],ID["EPSG",4326]]`,
			"WGS 84", 4326, Geographic, 1, 2, 1, 2},
		// Lambert conformal conic with one parallel and a scale factor (NTF-like zone II on GRS80),
		// and the IOGP worked example for Jamaica (guidance note 7-2: 17°55'55.80"N 76°56'37.26"W
		// on Clarke 1866; PROJ's answer includes the explicit zero TOWGS84's change of ellipsoid).
		{"lcc 1sp scaled", `PROJCS["x",GEOGCS["g",DATUM["d",SPHEROID["GRS 1980",6378137,298.257222101],TOWGS84[0,0,0,0,0,0,0]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic_1SP"],PARAMETER["latitude_of_origin",46.8],PARAMETER["central_meridian",2.337229],PARAMETER["scale_factor",0.99987742],PARAMETER["false_easting",600000],PARAMETER["false_northing",2200000],UNIT["metre",1]]`,
			"x", 0, Projected, 650000, 2300000, 3.00336729667018, 47.6976446438698},
		{"lcc 1sp jamaica", `PROJCS["JAD69 / Jamaica National Grid",GEOGCS["JAD69",DATUM["Jamaica_1969",SPHEROID["Clarke 1866",6378206.4,294.978698213898],TOWGS84[0,0,0,0,0,0,0]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic_1SP"],PARAMETER["latitude_of_origin",18],PARAMETER["central_meridian",-77],PARAMETER["scale_factor",1],PARAMETER["false_easting",250000],PARAMETER["false_northing",150000],UNIT["metre",1]]`,
			"JAD69 / Jamaica National Grid", 24200, Projected, 255966.58, 142493.51, -76.9436833507954, 17.9309107415757},
		{"local", `LOCAL_CS["site grid"]`, "site grid", 0, Other, 0, 0, math.NaN(), math.NaN()},
		{"unsupported projection", `PROJCS["x",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Robinson"],UNIT["Meter",1]]`,
			"x", 0, Projected, 0, 0, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseWKT(tt.wkt)
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tt.wantName || c.EPSG != tt.wantEPSG || c.Kind != tt.wantKind {
				t.Errorf("got %q EPSG:%d %s, want %q EPSG:%d %s", c.Name, c.EPSG, c.Kind, tt.wantName, tt.wantEPSG, tt.wantKind)
			}
			lon, lat, err := c.ToWGS84(tt.x, tt.y)
			if math.IsNaN(tt.wantLon) {
				if err == nil || c.CanTransform() {
					t.Errorf("transformed (%g, %g) to (%g, %g); want no transformation", tt.x, tt.y, lon, lat)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lon-tt.wantLon) > 1e-6 || math.Abs(lat-tt.wantLat) > 1e-6 {
				t.Errorf("(%g, %g) → (%.9f, %.9f), PROJ says (%.9f, %.9f)", tt.x, tt.y, lon, lat, tt.wantLon, tt.wantLat)
			}
		})
	}
}

func TestParseWKTErrors(t *testing.T) {
	for _, bad := range []string{"", "GEOGCS", `GEOGCS["x"`, `FOO["x"]`, `GEOGCS["no datum",PRIMEM["Greenwich",0]]`,
		`GEOGCS["x",DATUM["d",SPHEROID["s",abc,1]]]`, strings.Repeat("A[", 100) + strings.Repeat("]", 100), `GEOGCS["x"]]`} {
		if c, err := ParseWKT(bad); err == nil {
			t.Errorf("ParseWKT(%.40q) = %+v, want an error", bad, c)
		}
	}
}

func TestParseCode(t *testing.T) {
	for ref, want := range map[string]int{
		"EPSG:4326": 4326, "urn:ogc:def:crs:EPSG::31983": 31983, "http://www.opengis.net/def/crs/EPSG/0/3857": 3857,
		"http://www.opengis.net/gml/srs/epsg.xml#4674": 4674, "urn:ogc:def:crs:OGC:1.3:CRS84": 4326, "foo": 0, "EPSG:": 0,
	} {
		got, ok := ParseCode(ref)
		if got != want || ok != (want != 0) {
			t.Errorf("ParseCode(%q) = %d, %v; want %d", ref, got, ok, want)
		}
	}
}

func FuzzParseWKT(f *testing.F) {
	f.Add(nybbPRJ)
	f.Add(`GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseWKT(s)
		if err != nil {
			return
		}
		_, _, _ = c.ToWGS84(1000, 1000)
	})
}

func BenchmarkToWGS84(b *testing.B) {
	c, err := ParseWKT(nybbPRJ)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		_, _, _ = c.ToWGS84(980000+float64(i%1000), 200000)
	}
}

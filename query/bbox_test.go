package query

import "testing"

func TestBBoxFilter(t *testing.T) {
	for _, tc := range []struct {
		q, want string // want: canonical form, or "error"
	}{
		{"bbox:-71.2,42.2,-70.9,42.4", "bbox:-71.2,42.2,-70.9,42.4"},
		{"bbox:170,-20,-170,20", "bbox:170,-20,-170,20"},
		{"bbox:-180,-90,180,90 rivers", "(+bbox:-180,-90,180,90 +rivers)"},
		{"rivers OR bbox:0,0,0,0", "(rivers OR bbox:0,0,0,0)"},
		{"bbox:1,2,3", "error"},
		{"bbox:1,2,3,x", "error"},
		{"bbox:-181,0,0,1", "error"},
		{"bbox:0,10,1,5", "error"},
		{"bbox:0,-91,1,5", "error"},
		{"crs:4326", "crs:epsg:4326"},
		{"crs:EPSG:31983", "crs:epsg:31983"},
		{"crs:wgs84", "crs:wgs84"},
		{"format:Shapefile", "format:shapefile"},
		{"producer:https://www.IBGE.gov.br/", "producer:ibge.gov.br"},
		{"producer:ibge.gov.br/geo", "error"},
	} {
		n, err := Parse(tc.q, Options{})
		switch {
		case tc.want == "error":
			if err == nil {
				t.Errorf("%q parsed as %v", tc.q, n)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.q, err)
		case n.String() != tc.want:
			t.Errorf("%q: %s, want %s", tc.q, n.String(), tc.want)
		}
	}
}

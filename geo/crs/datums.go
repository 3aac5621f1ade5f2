package crs

// datumShifts maps datum names (datumKey form) to the 7-parameter Helmert shift to WGS84
// (tx ty tz in metres, rx ry rz in arc-seconds, position-vector convention, ds in ppm) that
// PROJ applies when no grid file is installed. Modern datums tied to ITRF are within a
// metre or two of WGS84 and get no shift, as EPSG's "(1)" transformations and PROJ do.
var datumShifts = map[string][7]float64{
	"wgs1984":                                {},
	"worldgeodeticsystem1984":                {},
	"worldgeodeticsystem1984ensemble":        {},
	"wgs84":                                  {},
	"northamerican1983":                      {},
	"northamericandatum1983":                 {},
	"nad83":                                  {},
	"northamerican1983harn":                  {},
	"nad83harn":                              {},
	"northamerican19832011":                  {},
	"nad832011":                              {},
	"northamerican1983csrs":                  {},
	"etrs1989":                               {},
	"europeanterrestrialreferencesystem1989": {},
	"europeanterrestrialreferencesystem1989ensemble": {},
	"etrs89":     {},
	"sirgas2000": {},
	"sistemadereferenciageocentricoparalasamericas2000": {},
	"sistemadereferenciageocentricoparaasamericas2000":  {},
	"geocentricdatumofaustralia1994":                    {},
	"gda1994":                                           {},
	"gda94":                                             {},
	"geocentricdatumofaustralia2020":                    {},
	"gda2020":                                           {},
	"newzealandgeodeticdatum2000":                       {},
	"nzgd2000":                                          {},
	"reseaugeodesiquefrancais1993":                      {},
	"rgf1993":                                           {},
	"itrf2008":                                          {},
	"itrf2014":                                          {},
	"chinageodeticcoordinatesystem2000":                 {},
	"japanesegeodeticdatum2000":                         {},
	"jgd2000":                                           {},
	"japanesegeodeticdatum2011":                         {},
	"jgd2011":                                           {},
	// EPSG:1173 NAD27 to WGS 84 (4), CONUS: what PROJ picks for the United States.
	"northamerican1927":      {-8, 160, 176},
	"northamericandatum1927": {-8, 160, 176},
	"nad27":                  {-8, 160, 176},
	// EPSG:1864 SAD69 to WGS 84 (1).
	"southamerican1969":      {-57, 1, -41},
	"southamericandatum1969": {-57, 1, -41},
	"sad69":                  {-57, 1, -41},
	// EPSG:6192 Corrego Alegre 1970-72 to WGS 84 (2).
	"corregoalegre":       {-205.57, 168.77, -4.12},
	"corregoalegre197072": {-205.57, 168.77, -4.12},
	// EPSG:1133 ED50 to WGS 84 (1).
	"european1950":      {-87, -98, -121},
	"europeandatum1950": {-87, -98, -121},
	"ed50":              {-87, -98, -121},
	// EPSG:1314 OSGB36 to WGS 84 (6).
	"osgb1936":                         {446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489},
	"ordnancesurveyofgreatbritain1936": {446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489},
	"osgb36":                           {446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489},
	// EPSG:1305 Tokyo to WGS 84 (1).
	"tokyo": {-148, 507, 685},
	// EPSG:1237 WGS 72 to WGS 84 (1).
	"wgs1972":                 {0, 0, 4.5, 0, 0, 0.554, 0.2263},
	"worldgeodeticsystem1972": {0, 0, 4.5, 0, 0, 0.554, 0.2263},
	// EPSG:1236 AGD84 to WGS 84 (1).
	"australiangeodetic1984": {-134, -48, 149},
	// EPSG:1254 Pulkovo 1942 to WGS 84 (1).
	"pulkovo1942": {28, -130, -95},
}

// datumByGeogEPSG covers geographic CRSs named by code whose datum name we do not know.
var datumByGeogEPSG = map[int][7]float64{
	4326: {}, 4269: {}, 4258: {}, 4674: {}, 4283: {}, 7844: {}, 4167: {}, 4171: {}, 4612: {}, 6668: {},
	4267: {-8, 160, 176}, 4618: {-67.35, 3.88, -38.22}, 4225: {-206.05, 168.28, -3.82}, 4230: {-87, -98, -121},
	4277: {446.448, -125.157, 542.06, 0.15, 0.247, 0.842, -20.489}, 4301: {-148, 507, 685},
	4322: {0, 0, 4.5, 0, 0, 0.554, 0.2263}, 4284: {28, -130, -95},
}

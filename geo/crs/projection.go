package crs

import (
	"math"
	"sync"

	"github.com/wroge/wgs84"
)

// param returns the first of the named parameters present.
func param(p map[string]float64, def float64, names ...string) float64 {
	for _, n := range names {
		if v, ok := p[n]; ok {
			return v
		}
	}
	return def
}

// projection builds the projection for a normalized method name, or says why it cannot.
// Distances in params are in the CRS's unit (metres per unit: unit).
func projection(method string, p map[string]float64, unit float64) (wgs84.Projection, string) {
	fe := param(p, 0, "falseeasting", "eastingatfalseorigin", "eastingatprojectioncentre") * unit
	fn := param(p, 0, "falsenorthing", "northingatfalseorigin", "northingatprojectioncentre") * unit
	lon0 := param(p, 0, "centralmeridian", "longitudeofnaturalorigin", "longitudeoforigin", "longitudeofcenter",
		"longitudeoffalseorigin", "longitudeofprojectioncentre")
	lat0 := param(p, 0, "latitudeoforigin", "latitudeofnaturalorigin", "latitudeofcenter", "latitudeoffalseorigin",
		"latitudeofprojectioncentre")
	k0 := param(p, 1, "scalefactor", "scalefactoratnaturalorigin")
	sp1 := param(p, lat0, "standardparallel1", "latitudeof1ststandardparallel", "latitudeofstandardparallel")
	sp2 := param(p, sp1, "standardparallel2", "latitudeof2ndstandardparallel")
	switch method {
	case "transversemercator", "gausskruger", "transversemercatorsouthorientated":
		if method == "transversemercatorsouthorientated" {
			return nil, "south-orientated transverse Mercator is not supported"
		}
		return tm(lon0, lat0, k0, fe, fn), ""
	case "lambertconformalconic2sp", "lambertconformalconic", "lambertconformalconic2spbelgium":
		_, a := p["standardparallel2"]
		_, b := p["latitudeof2ndstandardparallel"]
		if !a && !b { // ESRI writes one-parallel LCC under this name too
			return &lcc{lon0: lon0, lat0: lat0, lat1: lat0, lat2: lat0, k0: k0, fe: fe, fn: fn}, ""
		}
		return &lcc{lon0: lon0, lat0: lat0, lat1: sp1, lat2: sp2, k0: 1, fe: fe, fn: fn}, ""
	case "lambertconformalconic1sp":
		return &lcc{lon0: lon0, lat0: lat0, lat1: lat0, lat2: lat0, k0: k0, fe: fe, fn: fn}, ""
	case "albersconicequalarea", "albers", "albersequalarea":
		return wgs84.Datum{}.AlbersEqualAreaConic(lon0, lat0, sp1, sp2, fe, fn).Projection, ""
	case "lambertazimuthalequalarea":
		return &lambertAzimuthal{lon0: lon0, lat0: lat0, fe: fe, fn: fn}, ""
	case "popularvisualisationpseudomercator", "mercatorauxiliarysphere", "pseudomercator":
		return webMercator{fe: fe, fn: fn, lon0: lon0}, ""
	case "mercator1sp", "mercatorvarianta":
		return mercator{lon0: lon0, k0: k0, fe: fe, fn: fn}, ""
	case "mercator", "mercator2sp", "mercatorvariantb":
		// ESRI's "Mercator" names its standard parallel; EPSG's 2SP does too.
		lat1 := param(p, 0, "standardparallel1", "latitudeof1ststandardparallel")
		return mercator{lon0: lon0, lat1: lat1, k0: k0, fe: fe, fn: fn, twoSP: true}, ""
	case "equirectangular", "equidistantcylindrical", "platecarree":
		return equirectangular{lon0: lon0, lat0: lat0, lat1: param(p, 0, "standardparallel1", "latitudeof1ststandardparallel"), fe: fe, fn: fn}, ""
	case "obliquestereographic", "doublestereographic":
		return &obliqueStereographic{lon0: lon0, lat0: lat0, k0: k0, fe: fe, fn: fn}, ""
	case "polarstereographic", "polarstereographicvarianta", "polarstereographicvariantb", "polarstereographicvariantc",
		"stereographicnorthpole", "stereographicsouthpole", "stereographic":
		return polar(method, p, lon0, lat0, k0, fe, fn)
	case "sinusoidal":
		return &sinusoidal{lon0: lon0, fe: fe, fn: fn}, ""
	case "equidistantconic":
		return &equidistantConic{lon0: lon0, lat0: lat0, lat1: sp1, lat2: sp2, fe: fe, fn: fn}, ""
	}
	return nil, "projection method not supported for reprojection"
}

// polar builds a polar stereographic projection from the ways files name one:
//   - EPSG's variants (WKT 2): A has the pole as natural origin and a scale factor there, B a
//     standard parallel, C a standard parallel that also carries the false origin;
//   - GDAL's WKT 1 "Polar_Stereographic" and GeoTIFF's CT_PolarStereographic put either the
//     pole (variant A) or the standard parallel (variant B) in the latitude of origin;
//   - ESRI's "Stereographic_North_Pole"/"_South_Pole" give the standard parallel;
//   - "Stereographic" (PROJ's stere) is polar variant A when centred on a pole, and
//     Snyder's oblique ellipsoidal stereographic otherwise.
func polar(method string, p map[string]float64, lon0, lat0, k0, fe, fn float64) (wgs84.Projection, string) {
	lon0 = param(p, lon0, "longitudeoforigin", "straightverticallongitudefrompole")
	ts, hasTS := 0.0, false
	for _, n := range []string{"latitudeofstandardparallel", "standardparallel1"} {
		if v, ok := p[n]; ok {
			ts, hasTS = v, true
			break
		}
	}
	atPole := math.Abs(math.Abs(lat0)-90) < 1e-9
	ps := &polarStereographic{lon0: lon0, k0: k0, fe: fe, fn: fn}
	switch method {
	case "polarstereographicvarianta", "stereographic":
		if !atPole {
			if method == "stereographic" {
				return &stereographic{lon0: lon0, lat0: lat0, k0: k0, fe: fe, fn: fn}, ""
			}
			return nil, "polar stereographic (variant A) with a natural origin off the pole"
		}
		ps.latTS = lat0
	case "polarstereographicvariantb", "polarstereographicvariantc":
		if !hasTS {
			return nil, "polar stereographic without its standard parallel"
		}
		ps.latTS, ps.variantC = ts, method == "polarstereographicvariantc"
	case "stereographicnorthpole", "stereographicsouthpole":
		ps.latTS = 90
		if hasTS {
			ps.latTS = math.Abs(ts)
		}
		if method == "stereographicsouthpole" {
			ps.latTS = -ps.latTS
		}
	default: // "polarstereographic"
		switch {
		case hasTS:
			ps.latTS = ts
		case atPole || lat0 != 0:
			ps.latTS = lat0
		default:
			return nil, "polar stereographic without the pole or a standard parallel"
		}
	}
	if ps.latTS == 0 {
		return nil, "polar stereographic with its standard parallel on the equator"
	}
	ps.south = ps.latTS < 0
	return ps, ""
}

func tm(lon0, lat0, k0, fe, fn float64) wgs84.Projection {
	return &transverseMercator{lon0: lon0, lat0: lat0, k0: k0, fe: fe, fn: fn}
}

// transverseMercator uses Krüger's series to sixth order in n (Karney 2011, as PROJ's
// default "etmerc"), accurate to a few nanometres within 3900 km of the central meridian.
// wroge/wgs84's Snyder series is off by half a metre at the edge of a UTM zone, which is
// more than the 1e-6 degrees sonda promises.
//
// The series coefficients depend only on the ellipsoid, which is fixed for a CRS: they are
// computed on first use and kept.
type transverseMercator struct {
	lon0, lat0, k0, fe, fn float64

	once     sync.Once
	k        kruger
	xiOrigin float64
}

func (p *transverseMercator) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		p.k = newKruger(s)
		p.xiOrigin, _ = p.k.forward(rad(p.lat0), 0)
	})
}

type kruger struct {
	e, A        float64
	alpha, beta [6]float64
}

func newKruger(s wgs84.Spheroid) kruger {
	f := 1 / s.Fi()
	n := f / (2 - f)
	n2, n3 := n*n, n*n*n
	n4, n5, n6 := n3*n, n3*n2, n3*n3
	return kruger{
		e: math.Sqrt(f * (2 - f)),
		A: s.A() / (1 + n) * (1 + n2/4 + n4/64 + n6/256),
		alpha: [6]float64{
			n/2 - 2*n2/3 + 5*n3/16 + 41*n4/180 - 127*n5/288 + 7891*n6/37800,
			13*n2/48 - 3*n3/5 + 557*n4/1440 + 281*n5/630 - 1983433*n6/1935360,
			61*n3/240 - 103*n4/140 + 15061*n5/26880 + 167603*n6/181440,
			49561*n4/161280 - 179*n5/168 + 6601661*n6/7257600,
			34729*n5/80640 - 3418889*n6/1995840,
			212378941 * n6 / 319334400,
		},
		beta: [6]float64{
			n/2 - 2*n2/3 + 37*n3/96 - n4/360 - 81*n5/512 + 96199*n6/604800,
			n2/48 + n3/15 - 437*n4/1440 + 46*n5/105 - 1118711*n6/3870720,
			17*n3/480 - 37*n4/840 - 209*n5/4480 + 5569*n6/90720,
			4397*n4/161280 - 11*n5/504 - 830251*n6/7257600,
			4583*n5/161280 - 108847*n6/3991680,
			20648693 * n6 / 638668800,
		},
	}
}

// forward gives the normalized (ξ, η) of a point λ radians from the central meridian.
func (k kruger) forward(phi, lambda float64) (xi, eta float64) {
	t := math.Sinh(math.Atanh(math.Sin(phi)) - k.e*math.Atanh(k.e*math.Sin(phi)))
	xi0 := math.Atan2(t, math.Cos(lambda))
	eta0 := math.Atanh(math.Sin(lambda) / math.Sqrt(1+t*t))
	xi, eta = xi0, eta0
	for j := 1; j <= 6; j++ {
		a := k.alpha[j-1]
		xi += a * math.Sin(2*float64(j)*xi0) * math.Cosh(2*float64(j)*eta0)
		eta += a * math.Cos(2*float64(j)*xi0) * math.Sinh(2*float64(j)*eta0)
	}
	return xi, eta
}

func (p *transverseMercator) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	k := &p.k
	xi1 := (north-p.fn)/(p.k0*k.A) + p.xiOrigin
	eta1 := (east - p.fe) / (p.k0 * k.A)
	xi, eta := xi1, eta1
	for j := 1; j <= 6; j++ {
		b := k.beta[j-1]
		xi -= b * math.Sin(2*float64(j)*xi1) * math.Cosh(2*float64(j)*eta1)
		eta -= b * math.Cos(2*float64(j)*xi1) * math.Sinh(2*float64(j)*eta1)
	}
	chi := math.Asin(math.Sin(xi) / math.Cosh(eta)) // conformal latitude
	lambda := math.Atan2(math.Sinh(eta), math.Cos(xi))
	return p.lon0 + deg(lambda), deg(latitudeOfT(math.Tan(math.Pi/4-chi/2), k.e))
}

func (p *transverseMercator) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	xi, eta := p.k.forward(rad(lat), rad(lon-p.lon0))
	return p.fe + p.k0*p.k.A*eta, p.fn + p.k0*p.k.A*(xi-p.xiOrigin)
}

// lcc is the Lambert conformal conic projection with one or two standard parallels and a
// scale factor (EPSG methods 9801 and 9802, IOGP guidance note 7-2). wroge/wgs84 has the
// two-parallel case only and recomputes its constants on every call; this one computes them
// once per CRS.
type lcc struct {
	lon0, lat0, lat1, lat2, k0, fe, fn float64

	once          sync.Once
	e, n, aF, rF0 float64
}

func (p *lcc) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		e := eccentricity(s)
		m := func(phi float64) float64 { return math.Cos(phi) / math.Sqrt(1-e*e*math.Sin(phi)*math.Sin(phi)) }
		t := func(phi float64) float64 {
			es := e * math.Sin(phi)
			return math.Tan(math.Pi/4-phi/2) / math.Pow((1-es)/(1+es), e/2)
		}
		p1, p2, p0 := rad(p.lat1), rad(p.lat2), rad(p.lat0)
		if p1 == p2 {
			p.n = math.Sin(p1)
		} else {
			p.n = (math.Log(m(p1)) - math.Log(m(p2))) / (math.Log(t(p1)) - math.Log(t(p2)))
		}
		F := m(p1) / (p.n * math.Pow(t(p1), p.n))
		p.e, p.aF = e, s.A()*F*p.k0
		p.rF0 = p.aF * math.Pow(t(p0), p.n)
	})
}

func (p *lcc) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	dx, dy := east-p.fe, p.rF0-(north-p.fn)
	r := math.Copysign(math.Hypot(dx, dy), p.n)
	if p.n < 0 {
		dx, dy = -dx, -dy
	}
	t := math.Pow(r/p.aF, 1/p.n)
	theta := math.Atan2(dx, dy)
	return p.lon0 + deg(theta/p.n), deg(latitudeOfT(t, p.e))
}

func (p *lcc) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	phi := rad(lat)
	es := p.e * math.Sin(phi)
	t := math.Tan(math.Pi/4-phi/2) / math.Pow((1-es)/(1+es), p.e/2)
	r := p.aF * math.Pow(t, p.n)
	theta := p.n * rad(lon-p.lon0)
	return p.fe + r*math.Sin(theta), p.fn + p.rF0 - r*math.Cos(theta)
}

// latitudeOfT inverts t(φ) = tan(π/4 − φ/2) / ((1 − e sinφ)/(1 + e sinφ))^(e/2), the
// quantity the conformal projections of GN 7-2 (Mercator, Lambert conformal conic, polar
// stereographic) share, by fixed-point iteration to full double precision.
func latitudeOfT(t, e float64) float64 {
	phi := math.Pi/2 - 2*math.Atan(t)
	for i := 0; i < 30; i++ {
		es := e * math.Sin(phi)
		next := math.Pi/2 - 2*math.Atan(t*math.Pow((1-es)/(1+es), e/2))
		if math.Abs(next-phi) < 1e-15 {
			return next
		}
		phi = next
	}
	return phi
}

func rad(d float64) float64 { return d * math.Pi / 180 }
func deg(r float64) float64 { return r * 180 / math.Pi }

func eccentricity(s wgs84.Spheroid) float64 {
	f := 1 / s.Fi()
	return math.Sqrt(2*f - f*f)
}

// mercator is the ellipsoidal Mercator (EPSG methods 9804 and 9805).
type mercator struct {
	lon0, lat1, k0, fe, fn float64
	twoSP                  bool
}

func (m mercator) scale(s wgs84.Spheroid) float64 {
	if !m.twoSP {
		return m.k0
	}
	e := eccentricity(s)
	phi := rad(m.lat1)
	return math.Cos(phi) / math.Sqrt(1-e*e*math.Sin(phi)*math.Sin(phi))
}

func (m mercator) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	a, e := s.A(), eccentricity(s)
	k := m.scale(s)
	t := math.Exp(-(north - m.fn) / (a * k))
	return m.lon0 + deg((east-m.fe)/(a*k)), deg(latitudeOfT(t, e))
}

func (m mercator) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	a, e := s.A(), eccentricity(s)
	k := m.scale(s)
	phi := rad(lat)
	es := e * math.Sin(phi)
	east = m.fe + a*k*rad(lon-m.lon0)
	north = m.fn + a*k*math.Log(math.Tan(math.Pi/4+phi/2)*math.Pow((1-es)/(1+es), e/2))
	return east, north
}

// webMercator is the spherical Pseudo-Mercator of EPSG:3857 (on the ellipsoid's major axis).
type webMercator struct{ fe, fn, lon0 float64 }

func (w webMercator) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	a := s.A()
	return w.lon0 + deg((east-w.fe)/a), deg(math.Pi/2 - 2*math.Atan(math.Exp(-(north-w.fn)/a)))
}

func (w webMercator) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	a := s.A()
	return w.fe + a*rad(lon-w.lon0), w.fn + a*math.Log(math.Tan(math.Pi/4+rad(lat)/2))
}

// equirectangular is the spherical equidistant cylindrical projection (EPSG 1029, on the
// major axis, as PROJ's eqc): northings count from the latitude of origin, lat0, and
// eastings are true to scale on the standard parallel, lat1.
type equirectangular struct{ lon0, lat0, lat1, fe, fn float64 }

func (q equirectangular) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	a := s.A()
	return q.lon0 + deg((east-q.fe)/(a*math.Cos(rad(q.lat1)))), q.lat0 + deg((north-q.fn)/a)
}

func (q equirectangular) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	a := s.A()
	return q.fe + a*rad(lon-q.lon0)*math.Cos(rad(q.lat1)), q.fn + a*rad(lat-q.lat0)
}

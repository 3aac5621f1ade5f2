package crs

import (
	"math"
	"sync"

	"github.com/wroge/wgs84"
)

// obliqueStereographic is EPSG method 9809 ("Oblique Stereographic", ESRI's
// "Double_Stereographic", PROJ's sterea): the ellipsoid is mapped conformally onto the Gauss
// sphere, which is then projected stereographically. Formulas from IOGP Guidance Note 7-2
// §3.1.7.1; the inverse projects back from the sphere with Snyder's (1987) eq. 20-18 and 21-15,
// which keep the quadrant everywhere where the guidance note's arctangents need care.
type obliqueStereographic struct {
	lon0, lat0, k0, fe, fn float64

	once                 sync.Once
	e, n, c, r2k0, chi0  float64
	sinChi0, cosChi0     float64
	oneMinusE2, eHalfExp float64
}

func (p *obliqueStereographic) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		e := eccentricity(s)
		e2 := e * e
		phi0 := rad(p.lat0)
		sin0, cos0 := math.Sincos(phi0)
		w := 1 - e2*sin0*sin0
		rho0 := s.A() * (1 - e2) / math.Pow(w, 1.5)
		nu0 := s.A() / math.Sqrt(w)
		p.e, p.oneMinusE2 = e, 1-e2
		p.n = math.Sqrt(1 + e2*math.Pow(cos0, 4)/(1-e2))
		s1 := (1 + sin0) / (1 - sin0)
		s2 := (1 - e*sin0) / (1 + e*sin0)
		w1 := math.Pow(s1*math.Pow(s2, e), p.n)
		sinChi := (w1 - 1) / (w1 + 1)
		p.c = (p.n + sin0) * (1 - sinChi) / ((p.n - sin0) * (1 + sinChi))
		w2 := p.c * w1
		p.chi0 = math.Asin((w2 - 1) / (w2 + 1))
		p.sinChi0, p.cosChi0 = math.Sincos(p.chi0)
		p.r2k0 = 2 * math.Sqrt(rho0*nu0) * p.k0
	})
}

// conformal is the latitude χ on the Gauss sphere of the geodetic latitude φ.
func (p *obliqueStereographic) conformal(phi float64) float64 {
	sin := math.Sin(phi)
	sa := (1 + sin) / (1 - sin)
	sb := (1 - p.e*sin) / (1 + p.e*sin)
	w := p.c * math.Pow(sa*math.Pow(sb, p.e), p.n)
	return math.Asin((w - 1) / (w + 1))
}

func (p *obliqueStereographic) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	chi := p.conformal(rad(lat))
	dl := p.n * rad(lon-p.lon0) // Λ − Λ0
	sinChi, cosChi := math.Sincos(chi)
	sinDl, cosDl := math.Sincos(dl)
	b := 1 + sinChi*p.sinChi0 + cosChi*p.cosChi0*cosDl
	return p.fe + p.r2k0*cosChi*sinDl/b, p.fn + p.r2k0*(sinChi*p.cosChi0-cosChi*p.sinChi0*cosDl)/b
}

func (p *obliqueStereographic) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	x, y := east-p.fe, north-p.fn
	rho := math.Hypot(x, y)
	chi, dl := p.chi0, 0.0
	if rho > 0 {
		c := 2 * math.Atan(rho/p.r2k0) // angular distance from the origin on the sphere
		sinC, cosC := math.Sincos(c)
		chi = math.Asin(cosC*p.sinChi0 + y*sinC*p.cosChi0/rho)
		dl = math.Atan2(x*sinC, rho*p.cosChi0*cosC-y*p.sinChi0*sinC)
	}
	// Back from the Gauss sphere (GN 7-2): the isometric latitude ψ, then φ by iteration.
	psi := 0.5 * math.Log((1+math.Sin(chi))/(p.c*(1-math.Sin(chi)))) / p.n
	phi := 2*math.Atan(math.Exp(psi)) - math.Pi/2
	for i := 0; i < 30; i++ {
		sin, cos := math.Sincos(phi)
		psiI := math.Log(math.Tan(phi/2+math.Pi/4) * math.Pow((1-p.e*sin)/(1+p.e*sin), p.e/2))
		next := phi - (psiI-psi)*cos*(1-p.e*p.e*sin*sin)/p.oneMinusE2
		if math.Abs(next-phi) < 1e-15 {
			phi = next
			break
		}
		phi = next
	}
	return p.lon0 + deg(dl/p.n), deg(phi)
}

// polarStereographic is EPSG methods 9810 (variant A: scale factor at the pole), 9829
// (variant B: true scale on a standard parallel) and 9830 (variant C: B with its false
// origin where the standard parallel meets the longitude of origin), from IOGP Guidance Note
// 7-2 §3.1.7.2. The inverse finds φ by iteration (latitudeOfT) instead of the guidance
// note's series, to keep full double precision.
type polarStereographic struct {
	lon0, k0, fe, fn float64
	// latTS is the standard parallel (variants B and C); it is ±90 for variant A, whose
	// k0 is given, and its sign picks the pole then.
	latTS    float64
	south    bool
	variantC bool

	once   sync.Once
	e, aK  float64 // aK: ρ = aK · t
	rhoF   float64 // variant C: ρ of the standard parallel
	hemSgn float64 // +1 north pole, −1 south pole
}

func (p *polarStereographic) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		p.e = eccentricity(s)
		e := p.e
		p.hemSgn = 1
		if p.south {
			p.hemSgn = -1
		}
		root := math.Sqrt(math.Pow(1+e, 1+e) * math.Pow(1-e, 1-e))
		k0 := p.k0
		if math.Abs(math.Abs(p.latTS)-90) > 1e-10 {
			phiF := rad(p.latTS)
			sinF, cosF := math.Sincos(phiF)
			mF := cosF / math.Sqrt(1-e*e*sinF*sinF)
			k0 = mF * root / (2 * p.t(phiF))
			p.rhoF = s.A() * mF
		}
		p.aK = 2 * s.A() * k0 / root
	})
}

// t is GN 7-2's t for the projection's pole.
func (p *polarStereographic) t(phi float64) float64 {
	phi *= p.hemSgn // the south-pole formulas are the north-pole ones with φ negated
	es := p.e * math.Sin(phi)
	return math.Tan(math.Pi/4-phi/2) / math.Pow((1-es)/(1+es), p.e/2)
}

// poleNorth is the northing of the pole.
func (p *polarStereographic) poleNorth() float64 {
	if p.variantC {
		return p.fn + p.hemSgn*p.rhoF
	}
	return p.fn
}

func (p *polarStereographic) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	rho := p.aK * p.t(rad(lat))
	sin, cos := math.Sincos(rad(lon - p.lon0))
	return p.fe + rho*sin, p.poleNorth() - p.hemSgn*rho*cos
}

func (p *polarStereographic) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	dx, dy := east-p.fe, north-p.poleNorth()
	t := math.Hypot(dx, dy) / p.aK
	phi := latitudeOfT(t, p.e)
	if dx == 0 && dy == 0 {
		return p.lon0, deg(p.hemSgn * phi) // the pole (atan2 of zeros would say 180°)
	}
	// North: the meridian λ0 points down the grid from the pole; south: up.
	return p.lon0 + deg(math.Atan2(dx, -p.hemSgn*dy)), deg(p.hemSgn * phi)
}

// stereographic is the ellipsoidal oblique stereographic projection of Snyder (1987,
// eq. 21-27 to 21-38; PROJ's stere off the poles, ESRI's "Stereographic", GeoTIFF's
// CT_Stereographic): conformal latitudes are projected from a sphere tangent at the origin
// scaled by m1, unlike EPSG's Oblique Stereographic (obliqueStereographic), which projects
// the Gauss sphere. It has no EPSG method.
type stereographic struct {
	lon0, lat0, k0, fe, fn float64

	once         sync.Once
	e, akm1      float64 // akm1: 2·a·k0·m1
	sinX1, cosX1 float64 // the origin's conformal latitude
}

// conformalLat is the conformal latitude χ of φ (Snyder eq. 3-1).
func conformalLat(phi, e float64) float64 {
	es := e * math.Sin(phi)
	return 2*math.Atan(math.Tan(math.Pi/4+phi/2)*math.Pow((1-es)/(1+es), e/2)) - math.Pi/2
}

func (p *stereographic) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		p.e = eccentricity(s)
		phi1 := rad(p.lat0)
		sin1, cos1 := math.Sincos(phi1)
		m1 := cos1 / math.Sqrt(1-p.e*p.e*sin1*sin1)
		p.akm1 = 2 * s.A() * p.k0 * m1
		p.sinX1, p.cosX1 = math.Sincos(conformalLat(phi1, p.e))
	})
}

func (p *stereographic) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	sinX, cosX := math.Sincos(conformalLat(rad(lat), p.e))
	sinL, cosL := math.Sincos(rad(lon - p.lon0))
	a := p.akm1 / (p.cosX1 * (1 + p.sinX1*sinX + p.cosX1*cosX*cosL))
	return p.fe + a*cosX*sinL, p.fn + a*(p.cosX1*sinX-p.sinX1*cosX*cosL)
}

func (p *stereographic) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	x, y := east-p.fe, north-p.fn
	rho := math.Hypot(x, y)
	if rho == 0 {
		return p.lon0, p.lat0
	}
	ce := 2 * math.Atan(rho*p.cosX1/p.akm1)
	sinC, cosC := math.Sincos(ce)
	chi := math.Asin(cosC*p.sinX1 + y*sinC*p.cosX1/rho)
	lambda := math.Atan2(x*sinC, rho*p.cosX1*cosC-y*p.sinX1*sinC)
	// φ from χ (Snyder eq. 3-4): the t of χ on the sphere is the t of φ on the ellipsoid.
	return p.lon0 + deg(lambda), deg(latitudeOfT(math.Tan(math.Pi/4-chi/2), p.e))
}

package crs

import (
	"math"
	"sync"

	"github.com/wroge/wgs84"
)

// meridian measures distances along a meridian of an ellipsoid: M(φ), from the equator,
// and its inverse. The series in the third flattening n are Helmert's (Snyder 1987,
// eq. 3-21 and 3-26 written in n = e1): truncated after n⁴, they are good to well under a
// millimetre; the inverse is then polished with Newton steps on dM/dφ = ρ(φ).
type meridian struct {
	a, e2, scale float64 // scale: M(φ) = scale · (φ + Σ …)
	fwd, inv     [4]float64
}

func newMeridian(s wgs84.Spheroid) meridian {
	f := 1 / s.Fi()
	n := f / (2 - f)
	n2, n3, n4 := n*n, n*n*n, n*n*n*n
	return meridian{
		a: s.A(), e2: f * (2 - f),
		scale: s.A() / (1 + n) * (1 + n2/4 + n4/64),
		fwd:   [4]float64{-(3*n/2 - 9*n3/16), 15*n2/16 - 15*n4/32, -35 * n3 / 48, 315 * n4 / 512},
		inv:   [4]float64{3*n/2 - 27*n3/32, 21*n2/16 - 55*n4/32, 151 * n3 / 96, 1097 * n4 / 512},
	}
}

// arc is M(φ) in metres.
func (m meridian) arc(phi float64) float64 {
	s := phi
	for j, c := range m.fwd {
		s += c * math.Sin(2*float64(j+1)*phi)
	}
	return m.scale * s
}

// latitude is the φ whose M(φ) is arc.
func (m meridian) latitude(arc float64) float64 {
	mu := arc / m.scale // the rectifying latitude
	phi := mu
	for j, c := range m.inv {
		phi += c * math.Sin(2*float64(j+1)*mu)
	}
	for i := 0; i < 3; i++ {
		sin := math.Sin(phi)
		w := 1 - m.e2*sin*sin
		rho := m.a * (1 - m.e2) / (w * math.Sqrt(w))
		phi -= (m.arc(phi) - arc) / rho
	}
	return phi
}

// sinusoidal is the ellipsoidal sinusoidal projection (Snyder 1987, eq. 30-8 to 30-11; PROJ's
// sinu): parallels are straight and true to scale, and so is the central meridian.
type sinusoidal struct {
	lon0, fe, fn float64

	once sync.Once
	m    meridian
}

func (p *sinusoidal) setup(s wgs84.Spheroid) { p.once.Do(func() { p.m = newMeridian(s) }) }

func (p *sinusoidal) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	phi := rad(lat)
	sin, cos := math.Sincos(phi)
	return p.fe + p.m.a*rad(lon-p.lon0)*cos/math.Sqrt(1-p.m.e2*sin*sin), p.fn + p.m.arc(phi)
}

// ToLonLat gives NaN for points right or left of the projection's outline (more than 180°
// from the central meridian), so they are reported as outside its domain.
func (p *sinusoidal) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	phi := p.m.latitude(north - p.fn)
	if math.Abs(phi) > math.Pi/2+1e-12 {
		return math.NaN(), math.NaN()
	}
	sin, cos := math.Sincos(phi)
	if cos < 1e-12 { // a pole: every longitude is the same point
		return p.lon0, deg(phi)
	}
	lambda := (east - p.fe) * math.Sqrt(1-p.m.e2*sin*sin) / (p.m.a * cos)
	if math.Abs(lambda) > math.Pi+1e-12 {
		return math.NaN(), math.NaN()
	}
	return p.lon0 + deg(lambda), deg(phi)
}

// equidistantConic is the ellipsoidal equidistant conic projection with one or two standard
// parallels (EPSG method 1119; Snyder 1987, eq. 14-15 and 16-1 to 16-16; PROJ's eqdc):
// meridians are true to scale.
type equidistantConic struct {
	lon0, lat0, lat1, lat2, fe, fn float64

	once sync.Once
	m    meridian
	n, g float64 // g: a·G of Snyder, in metres
	rho0 float64
}

func (p *equidistantConic) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		p.m = newMeridian(s)
		mm := func(phi float64) float64 {
			sin, cos := math.Sincos(phi)
			return cos / math.Sqrt(1-p.m.e2*sin*sin)
		}
		p1, p2 := rad(p.lat1), rad(p.lat2)
		if math.Abs(p1-p2) < 1e-10 {
			p.n = math.Sin(p1)
		} else {
			p.n = p.m.a * (mm(p1) - mm(p2)) / (p.m.arc(p2) - p.m.arc(p1))
		}
		p.g = p.m.a*mm(p1)/p.n + p.m.arc(p1)
		p.rho0 = p.g - p.m.arc(rad(p.lat0))
	})
}

func (p *equidistantConic) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	rho := p.g - p.m.arc(rad(lat))
	sin, cos := math.Sincos(p.n * rad(lon-p.lon0))
	return p.fe + rho*sin, p.fn + p.rho0 - rho*cos
}

func (p *equidistantConic) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	x, y := east-p.fe, p.rho0-(north-p.fn)
	if p.n < 0 { // a cone opening to the south
		x, y = -x, -y
	}
	rho := math.Copysign(math.Hypot(x, y), p.n)
	theta := math.Atan2(x, y)
	return p.lon0 + deg(theta/p.n), deg(p.m.latitude(p.g - rho))
}

package crs

import (
	"math"
	"sync"

	"github.com/wroge/wgs84"
)

// lambertAzimuthal is the ellipsoidal Lambert azimuthal equal-area projection (EPSG method
// 9820): the oblique and equatorial aspects from IOGP Guidance Note 7-2 §3.1.6.2, the polar
// aspects from Snyder (1987) eq. 24-23 to 24-26 and 24-30, where the guidance note's D
// divides by cos β0 = 0. wroge/wgs84's version gave the wrong hemisphere for a centre south
// of the equator and NaN at the centre and at a pole.
type lambertAzimuthal struct {
	lon0, lat0, fe, fn float64

	once                 sync.Once
	a, e, e2, qp, rq, d  float64
	sinBeta0, cosBeta0   float64
	polar                float64 // +1 north polar aspect, −1 south, 0 oblique or equatorial
	authalicToGeodetic   [3]float64
	oneMinusE2, halfInvE float64
}

func (p *lambertAzimuthal) setup(s wgs84.Spheroid) {
	p.once.Do(func() {
		p.a, p.e = s.A(), eccentricity(s)
		p.e2 = p.e * p.e
		p.oneMinusE2 = 1 - p.e2
		e2, e4, e6 := p.e2, p.e2*p.e2, p.e2*p.e2*p.e2
		p.authalicToGeodetic = [3]float64{e2/3 + 31*e4/180 + 517*e6/5040, 23*e4/360 + 251*e6/3780, 761 * e6 / 45360}
		p.qp = p.q(math.Pi / 2)
		p.rq = p.a * math.Sqrt(p.qp/2)
		switch {
		case math.Abs(p.lat0-90) < 1e-10:
			p.polar = 1
		case math.Abs(p.lat0+90) < 1e-10:
			p.polar = -1
		default:
			phi0 := rad(p.lat0)
			beta0 := math.Asin(p.q(phi0) / p.qp)
			p.sinBeta0, p.cosBeta0 = math.Sincos(beta0)
			sin0 := math.Sin(phi0)
			p.d = p.a * math.Cos(phi0) / math.Sqrt(1-p.e2*sin0*sin0) / (p.rq * p.cosBeta0)
		}
	})
}

// q is GN 7-2's q (Snyder's eq. 3-12); a sphere has q = 2 sin φ.
func (p *lambertAzimuthal) q(phi float64) float64 {
	sin := math.Sin(phi)
	if p.e == 0 {
		return 2 * sin
	}
	return p.oneMinusE2 * (sin/(1-p.e2*sin*sin) - 1/(2*p.e)*math.Log((1-p.e*sin)/(1+p.e*sin)))
}

// latitude is the φ of the authalic latitude β: the guidance note's series, then Newton
// steps on q (Snyder eq. 3-16) to full precision.
func (p *lambertAzimuthal) latitude(beta float64) float64 {
	c := p.authalicToGeodetic
	phi := beta + c[0]*math.Sin(2*beta) + c[1]*math.Sin(4*beta) + c[2]*math.Sin(6*beta)
	want := p.qp * math.Sin(beta)
	for i := 0; i < 3; i++ {
		sin, cos := math.Sincos(phi)
		if cos < 1e-12 {
			break
		}
		w := 1 - p.e2*sin*sin
		phi += w * w / (2 * cos) * (want/p.oneMinusE2 - p.q(phi)/p.oneMinusE2)
	}
	return phi
}

func (p *lambertAzimuthal) FromLonLat(lon, lat float64, s wgs84.Spheroid) (east, north float64) {
	p.setup(s)
	phi := rad(lat)
	sinL, cosL := math.Sincos(rad(lon - p.lon0))
	if p.polar != 0 {
		rho := 0.0 // at the centre pole, where the square root would turn rounding into centimetres
		if p.polar*lat < 90 {
			rho = p.a * math.Sqrt(math.Max(0, p.qp-p.polar*p.q(phi)))
		}
		return p.fe + rho*sinL, p.fn - p.polar*rho*cosL
	}
	sinB, cosB := math.Sincos(math.Asin(math.Max(-1, math.Min(1, p.q(phi)/p.qp))))
	b := p.rq * math.Sqrt(2/(1+p.sinBeta0*sinB+p.cosBeta0*cosB*cosL))
	return p.fe + b*p.d*cosB*sinL, p.fn + b/p.d*(p.cosBeta0*sinB-p.sinBeta0*cosB*cosL)
}

func (p *lambertAzimuthal) ToLonLat(east, north float64, s wgs84.Spheroid) (lon, lat float64) {
	p.setup(s)
	x, y := east-p.fe, north-p.fn
	if p.polar != 0 {
		rho := math.Hypot(x, y)
		sinBeta := p.polar * (1 - rho*rho/(p.a*p.a*p.qp))
		if math.Abs(sinBeta) > 1+1e-12 {
			return math.NaN(), math.NaN() // beyond the opposite pole
		}
		lon = p.lon0
		if rho > 0 {
			lon += deg(math.Atan2(x, -p.polar*y))
		}
		return lon, deg(p.latitude(math.Asin(math.Max(-1, math.Min(1, sinBeta)))))
	}
	rho := math.Hypot(x/p.d, p.d*y)
	if rho == 0 {
		return p.lon0, p.lat0
	}
	arg := rho / (2 * p.rq)
	if arg > 1+1e-12 {
		return math.NaN(), math.NaN() // beyond the antipode
	}
	c := 2 * math.Asin(math.Min(1, arg))
	sinC, cosC := math.Sincos(c)
	beta := math.Asin(math.Max(-1, math.Min(1, cosC*p.sinBeta0+p.d*y*sinC*p.cosBeta0/rho)))
	lambda := math.Atan2(x*sinC, p.d*rho*p.cosBeta0*cosC-p.d*p.d*y*p.sinBeta0*sinC)
	return p.lon0 + deg(lambda), deg(p.latitude(beta))
}

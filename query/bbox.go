package query

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BBox is the value of a bbox: filter: a box in WGS84 longitude and latitude. West may
// exceed East: the box then crosses the antimeridian (170,-20,-170,20 spans 40 degrees
// around 180).
type BBox struct {
	West, South, East, North float64
}

// ParseBBox reads "west,south,east,north" in decimal degrees.
func ParseBBox(s string) (BBox, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	if len(parts) != 4 {
		return BBox{}, fmt.Errorf("%q has %d numbers, not the four west,south,east,north", s, len(parts))
	}
	var v [4]float64
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return BBox{}, fmt.Errorf("%q is not a number", strings.TrimSpace(p))
		}
		v[i] = x
	}
	b := BBox{West: v[0], South: v[1], East: v[2], North: v[3]}
	switch {
	case b.West < -180 || b.West > 180 || b.East < -180 || b.East > 180:
		return BBox{}, errors.New("longitudes run from -180 to 180")
	case b.South < -90 || b.South > 90 || b.North < -90 || b.North > 90:
		return BBox{}, errors.New("latitudes run from -90 to 90")
	case b.South > b.North:
		return BBox{}, fmt.Errorf("south (%v) is above north (%v)", b.South, b.North)
	}
	return b, nil
}

// String writes the box as ParseBBox reads it, with the shortest exact decimals.
func (b BBox) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	return f(b.West) + "," + f(b.South) + "," + f(b.East) + "," + f(b.North)
}

// CrossesAntimeridian reports whether the box spans longitude 180 (West > East).
func (b BBox) CrossesAntimeridian() bool { return b.West > b.East }

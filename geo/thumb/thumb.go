// Package thumb draws dataset thumbnails: vector shapes scaled into their bounding box
// (polygons filled, lines stroked, points as dots) and raster bands stretched over a colour
// ramp. The thesis showed one per file (seed 000 Fig. 3-5); sonda makes it once, when the
// dataset is inspected, and serves the PNG from then on.
package thumb

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"sort"

	"golang.org/x/image/vector"

	"github.com/sonda-search/sonda/geo/geom"
)

// Colours of vector drawings.
var (
	background = color.RGBA{0xf7, 0xf7, 0xf2, 0xff}
	fill       = color.RGBA{0x9c, 0xc3, 0xa5, 0xff}
	stroke     = color.RGBA{0x2f, 0x5d, 0x50, 0xff}
	line       = color.RGBA{0x1f, 0x5f, 0xa8, 0xff}
	dot        = color.RGBA{0xc0, 0x39, 0x2b, 0xff}
)

// Canvas maps a box onto a size×size image, keeping the aspect ratio, with a margin.
type Canvas struct {
	Img           *image.RGBA
	box           geom.BBox
	scale, x0, y0 float64
}

// NewCanvas returns a canvas for box (in any CRS) of size pixels a side.
func NewCanvas(box geom.BBox, size int) *Canvas {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.Draw(img, img.Bounds(), &image.Uniform{background}, image.Point{}, draw.Src)
	c := &Canvas{Img: img, box: box}
	margin := float64(size) * 0.04
	w, h := box.Width(), box.Height()
	if w <= 0 && h <= 0 {
		w, h = 1, 1 // a single point: centre it
	}
	avail := float64(size) - 2*margin
	c.scale = avail / math.Max(w, h)
	c.x0 = margin + (avail-w*c.scale)/2
	c.y0 = margin + (avail-h*c.scale)/2
	return c
}

func (c *Canvas) xy(p geom.Point) (float32, float32) {
	x := c.x0 + (p.X-c.box.MinX)*c.scale
	y := float64(c.Img.Bounds().Dy()) - (c.y0 + (p.Y-c.box.MinY)*c.scale)
	return float32(x), float32(y)
}

// Shapes draws vector shapes: polygons first, then lines, then points on top.
func (c *Canvas) Shapes(shapes []geom.Shape) {
	size := c.Img.Bounds().Dx()
	var polys []geom.Shape
	for _, s := range shapes {
		if s.Kind == geom.KindPolygon {
			polys = append(polys, s)
		}
	}
	if len(polys) > 0 {
		r := vector.NewRasterizer(size, size)
		for _, s := range polys {
			for _, ring := range s.Parts {
				if len(ring) < 3 {
					continue
				}
				x, y := c.xy(ring[0])
				r.MoveTo(x, y)
				for _, p := range ring[1:] {
					x, y := c.xy(p)
					r.LineTo(x, y)
				}
				r.ClosePath()
			}
		}
		r.Draw(c.Img, c.Img.Bounds(), &image.Uniform{fill}, image.Point{})
		for _, s := range polys {
			for _, ring := range s.Parts {
				c.polyline(ring, stroke, true)
			}
		}
	}
	for _, s := range shapes {
		if s.Kind == geom.KindLine {
			for _, part := range s.Parts {
				c.polyline(part, line, false)
			}
		}
	}
	for _, s := range shapes {
		if s.Kind == geom.KindPoint {
			for _, part := range s.Parts {
				for _, p := range part {
					x, y := c.xy(p)
					for dx := -1; dx <= 1; dx++ {
						for dy := -1; dy <= 1; dy++ {
							c.Img.SetRGBA(int(x)+dx, int(y)+dy, dot)
						}
					}
				}
			}
		}
	}
}

func (c *Canvas) polyline(pts []geom.Point, col color.RGBA, closed bool) {
	if len(pts) < 2 {
		return
	}
	px, py := c.xy(pts[0])
	for _, p := range pts[1:] {
		x, y := c.xy(p)
		c.segment(px, py, x, y, col)
		px, py = x, y
	}
	if closed {
		x, y := c.xy(pts[0])
		c.segment(px, py, x, y, col)
	}
}

// segment draws a one-pixel line (DDA), clipped to the image.
func (c *Canvas) segment(x0, y0, x1, y1 float32, col color.RGBA) {
	dx, dy := x1-x0, y1-y0
	steps := int(math.Max(math.Abs(float64(dx)), math.Abs(float64(dy))))
	if steps > 4*c.Img.Bounds().Dx() {
		steps = 4 * c.Img.Bounds().Dx() // a wild coordinate must not cost a million steps
	}
	if steps == 0 {
		c.Img.SetRGBA(int(x0), int(y0), col)
		return
	}
	for i := 0; i <= steps; i++ {
		t := float32(i) / float32(steps)
		c.Img.SetRGBA(int(x0+t*dx), int(y0+t*dy), col)
	}
}

// Raster draws a grid of values (row by row from the top, NaN for no data) stretched
// between its 2nd and 98th percentiles over a terrain-like ramp, filling the canvas's box.
func (c *Canvas) Raster(w, h int, values []float64, cell geom.BBox) {
	if w <= 0 || h <= 0 || len(values) < w*h {
		return
	}
	lo, hi := stretch(values)
	x0, y1 := c.xy(geom.Point{X: cell.MinX, Y: cell.MinY})
	x1, y0 := c.xy(geom.Point{X: cell.MaxX, Y: cell.MaxY})
	b := c.Img.Bounds()
	for py := max(int(y0), b.Min.Y); py < min(int(math.Ceil(float64(y1))), b.Max.Y); py++ {
		gy := int((float32(py) - y0) / (y1 - y0) * float32(h))
		if gy < 0 || gy >= h {
			continue
		}
		for px := max(int(x0), b.Min.X); px < min(int(math.Ceil(float64(x1))), b.Max.X); px++ {
			gx := int((float32(px) - x0) / (x1 - x0) * float32(w))
			if gx < 0 || gx >= w {
				continue
			}
			v := values[gy*w+gx]
			if math.IsNaN(v) {
				continue
			}
			t := 0.5
			if hi > lo {
				t = (v - lo) / (hi - lo)
			}
			c.Img.SetRGBA(px, py, ramp(t))
		}
	}
}

func stretch(values []float64) (lo, hi float64) {
	var vs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	sort.Float64s(vs) // at most 65,536 cells: sorting is cheap

	return vs[len(vs)*2/100], vs[(len(vs)-1)*98/100]
}

// ramp maps 0..1 to a green-yellow-brown-white terrain ramp.
func ramp(t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	stops := []struct {
		at      float64
		r, g, b float64
	}{{0, 0x2b, 0x83, 0xba}, {0.25, 0x1a, 0x96, 0x41}, {0.5, 0xe6, 0xd7, 0x6a}, {0.75, 0x8c, 0x51, 0x0a}, {1, 0xf5, 0xf5, 0xf5}}
	for i := 1; i < len(stops); i++ {
		if t <= stops[i].at {
			a, b := stops[i-1], stops[i]
			f := (t - a.at) / (b.at - a.at)
			return color.RGBA{uint8(a.r + f*(b.r-a.r)), uint8(a.g + f*(b.g-a.g)), uint8(a.b + f*(b.b-a.b)), 0xff}
		}
	}
	return color.RGBA{0xf5, 0xf5, 0xf5, 0xff}
}

// PNG encodes the canvas.
func (c *Canvas) PNG() ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, c.Img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

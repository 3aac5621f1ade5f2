package sim

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// lineColors are distinguishable on white and in grey print (Okabe–Ito palette).
var lineColors = []color.RGBA{
	{0, 0, 0, 255}, {230, 159, 0, 255}, {86, 180, 233, 255}, {0, 158, 115, 255},
	{213, 94, 0, 255}, {0, 114, 178, 255}, {204, 121, 167, 255}, {240, 228, 66, 255},
}

// Plot draws freshness over time, one line per policy, into path; the format follows the
// extension (.svg, .png, .pdf, .eps, .jpg, .tif).
func Plot(results []Result, horizon float64, title, path string) error {
	return PlotAxis(results, horizon, "day", title, path)
}

// PlotAxis is Plot with the time axis in unit (the series span [0, horizon] units).
func PlotAxis(results []Result, horizon float64, unit, title, path string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit
	p.Y.Label.Text = "freshness (share of pages up to date)"
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.YOffs = vg.Points(10)
	p.Add(plotter.NewGrid())
	lo := 1.0
	for i, r := range results {
		if len(r.Series) == 0 {
			continue
		}
		width := horizon / float64(len(r.Series))
		pts := make(plotter.XYs, len(r.Series))
		for k, f := range r.Series {
			pts[k].X = (float64(k) + 0.5) * width
			pts[k].Y = f
			lo = min(lo, f)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("sim: plot %s: %w", r.Policy, err)
		}
		line.Color = lineColors[i%len(lineColors)]
		line.Width = vg.Points(1.2)
		if r.Policy == Oracle {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (%.3f)", r.Policy, r.Freshness), line)
	}
	p.Y.Min, p.Y.Max = max(0, lo-0.05), 1
	p.X.Min, p.X.Max = 0, horizon
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.XOffs = vg.Points(4)
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "svg", "png", "pdf", "eps", "jpg", "jpeg", "tif", "tiff":
	default:
		return fmt.Errorf("sim: plot file %q: use a .svg, .png or .pdf name", path)
	}
	if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
		return fmt.Errorf("sim: write plot: %w", err)
	}
	return nil
}

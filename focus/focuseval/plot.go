package focuseval

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette has a distinct colour for each of up to ten curves (Tableau 10); more repeat.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// Plot draws the harvest rate of each trace against the number of fetches: cumulative in
// the upper panel and, when window > 0, over the last window fetches in the lower one. The
// file name's extension chooses the format (.png, .svg or .pdf).
func Plot(traces []*Trace, path string, window int, j Judge) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" && ext != ".pdf" {
		return fmt.Errorf("focuseval: plot %s: use a .png, .svg or .pdf file name", path)
	}
	whose := "ground truth"
	if j == ByCrawler {
		whose = "the crawler's judgment"
	}
	panels := []*plot.Plot{panel(traces, "Cumulative harvest rate ("+whose+")", 0, j)}
	if window > 0 {
		panels = append(panels, panel(traces, fmt.Sprintf("Harvest rate of the last %d fetches", window), window, j))
	}
	w, h := 8*vg.Inch, 4.5*vg.Inch*vg.Length(len(panels))
	c, err := draw.NewFormattedCanvas(w, h, ext[1:])
	if err != nil {
		return fmt.Errorf("focuseval: plot %s: %w", path, err)
	}
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel is one harvest chart: cumulative (window 0) or windowed.
func panel(traces []*Trace, title string, window int, j Judge) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "pages fetched"
	p.Y.Label.Text = "relevant / fetched"
	// Headroom above 1 keeps the legend off the curves, which are often near the top.
	p.Y.Min, p.Y.Max = 0, 1.6
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}})
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.Padding = vg.Points(2)
	for i, t := range traces {
		step := max(1, t.Len()/400) // a few hundred points draw every curve faithfully
		var xys plotter.XYs
		for n := max(step, window); n <= t.Len(); n += step {
			y := t.Harvest(n, j)
			if window > 0 {
				y = t.Windowed(n, window, j)
			}
			xys = append(xys, plotter.XY{X: float64(n), Y: y})
		}
		if len(xys) < 2 {
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		if i >= len(palette) {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(t.Strategy, line)
	}
	p.Legend.XOffs = -vg.Points(8)
	return p
}

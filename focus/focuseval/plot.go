package focuseval

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot draws the harvest rate of each trace against the number of fetches, cumulative
// (solid) and over a sliding window of the last window fetches (dashed, window > 0), and
// saves it to path; the extension chooses the format (.png, .svg, .pdf).
func Plot(traces []*Trace, path string, window int, j Judge) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" && ext != ".pdf" {
		return fmt.Errorf("focuseval: plot %s: use a .png, .svg or .pdf file name", path)
	}
	p := plot.New()
	whose := "ground truth"
	if j == ByCrawler {
		whose = "crawler's judgment"
	}
	p.Title.Text = "Harvest rate (" + whose + ")"
	p.X.Label.Text = "pages fetched"
	p.Y.Label.Text = "relevant / fetched"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	for i, t := range traces {
		step := max(1, t.Len()/400) // a few hundred points draw every curve faithfully
		var cum, win plotter.XYs
		for n := step; n <= t.Len(); n += step {
			cum = append(cum, plotter.XY{X: float64(n), Y: t.Harvest(n, j)})
			if window > 0 && n >= window {
				win = append(win, plotter.XY{X: float64(n), Y: t.Windowed(n, window, j)})
			}
		}
		line, err := plotter.NewLine(cum)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(t.Strategy, line)
		if len(win) > 1 {
			wl, err := plotter.NewLine(win)
			if err != nil {
				return err
			}
			wl.Color = plotutil.Color(i)
			wl.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
			wl.Width = vg.Points(0.7)
			p.Add(wl)
		}
	}
	if window > 0 {
		p.Legend.Add(fmt.Sprintf("dashed: last %d fetches", window))
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

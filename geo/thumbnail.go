package geo

import (
	"errors"

	"github.com/sonda-search/sonda/geo/geom"
	"github.com/sonda-search/sonda/geo/thumb"
)

// ThumbnailSize is the side of dataset thumbnails in pixels.
const ThumbnailSize = 256

// ErrNothingToDraw means the dataset has no geometry or georeferenced raster.
var ErrNothingToDraw = errors.New("geo: nothing to draw")

// Thumbnail draws the dataset as a size×size PNG: the layers that share the first drawable
// layer's CRS, rasters under vectors, in their common native box. It uses what Inspect kept
// (a vertex-bounded sketch, a downsampled band), so it costs no second read of the file.
func (ds *Dataset) Thumbnail(size int) ([]byte, error) {
	if size <= 0 {
		size = ThumbnailSize
	}
	var ref *Layer
	box := geom.Empty()
	for _, l := range ds.Layers {
		if l.BBox.IsEmpty() || (len(l.sketch.Shapes) == 0 && l.grid == nil) {
			continue
		}
		if ref == nil {
			ref = l
		}
		if sameCRS(ref, l) {
			box = box.Union(l.BBox)
		}
	}
	if ref == nil {
		return nil, ErrNothingToDraw
	}
	c := thumb.NewCanvas(box, size)
	for _, l := range ds.Layers {
		if l.grid != nil && sameCRS(ref, l) {
			c.Raster(l.grid.W, l.grid.H, l.grid.Values, l.BBox)
		}
	}
	for _, l := range ds.Layers {
		if len(l.sketch.Shapes) > 0 && sameCRS(ref, l) && !l.BBox.IsEmpty() {
			c.Shapes(l.sketch.Shapes)
		}
	}
	return c.PNG()
}

func sameCRS(a, b *Layer) bool {
	switch {
	case a == b:
		return true
	case a.CRS == nil || b.CRS == nil:
		return a.CRS == nil && b.CRS == nil
	case a.CRS.EPSG != 0 || b.CRS.EPSG != 0:
		return a.CRS.EPSG == b.CRS.EPSG
	}
	return a.CRS.Name == b.CRS.Name
}

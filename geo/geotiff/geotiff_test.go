package geotiff

import (
	"bytes"
	"encoding/binary"
	"github.com/sonda-search/sonda/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"testing"
)

type tiffTag struct {
	tag, typ uint16
	vals     any // []uint16, []uint32, []float64 or string
}

// buildTIFF writes a classic TIFF with one uncompressed strip of pixels.
func buildTIFF(order binary.ByteOrder, w, h int, pixels []byte, extra ...tiffTag) []byte {
	tags := []tiffTag{
		{tagImageWidth, 3, []uint16{uint16(w)}},
		{tagImageLength, 3, []uint16{uint16(h)}},
		{tagBitsPerSample, 3, []uint16{8}},
		{tagCompression, 3, []uint16{1}},
		{tagStripOffsets, 4, []uint32{0}}, // patched below
		{tagRowsPerStrip, 3, []uint16{uint16(h)}},
		{tagStripByteCounts, 4, []uint32{uint32(len(pixels))}},
	}
	tags = append(tags, extra...)
	var out bytes.Buffer
	if order == binary.LittleEndian {
		out.WriteString("II")
	} else {
		out.WriteString("MM")
	}
	_ = binary.Write(&out, order, uint16(42))
	_ = binary.Write(&out, order, uint32(8))
	ifdLen := 2 + 12*len(tags) + 4
	dataAt := 8 + ifdLen
	var data bytes.Buffer
	var ifd bytes.Buffer
	_ = binary.Write(&ifd, order, uint16(len(tags)))
	for _, t := range tags {
		var v bytes.Buffer
		count := 0
		switch x := t.vals.(type) {
		case []uint16:
			_ = binary.Write(&v, order, x)
			count = len(x)
		case []uint32:
			if t.tag == tagStripOffsets {
				x = []uint32{0xFFFFFFFF}
			}
			_ = binary.Write(&v, order, x)
			count = len(x)
		case []float64:
			_ = binary.Write(&v, order, x)
			count = len(x)
		case string:
			v.WriteString(x + "\x00")
			count = v.Len()
		}
		_ = binary.Write(&ifd, order, t.tag)
		_ = binary.Write(&ifd, order, t.typ)
		_ = binary.Write(&ifd, order, uint32(count))
		if v.Len() <= 4 {
			b := append(v.Bytes(), make([]byte, 4-v.Len())...)
			ifd.Write(b)
		} else {
			_ = binary.Write(&ifd, order, uint32(dataAt+data.Len()))
			data.Write(v.Bytes())
		}
	}
	_ = binary.Write(&ifd, order, uint32(0))
	pixAt := dataAt + data.Len()
	b := ifd.Bytes()
	// patch the strip offset (marked 0xFFFFFFFF)
	marker := make([]byte, 4)
	order.PutUint32(marker, 0xFFFFFFFF)
	i := bytes.Index(b, marker)
	order.PutUint32(b[i:], uint32(pixAt))
	out.Write(b)
	out.Write(data.Bytes())
	out.Write(pixels)
	return out.Bytes()
}

func geoTags(epsg uint16, x0, y0, sx, sy float64, pixelIsPoint bool) []tiffTag {
	rt := uint16(1)
	if pixelIsPoint {
		rt = 2
	}
	return []tiffTag{
		{tagPixelScale, 12, []float64{sx, sy, 0}},
		{tagTiepoint, 12, []float64{0, 0, 0, x0, y0, 0}},
		{tagGeoKeys, 3, []uint16{1, 1, 0, 3, keyModelType, 0, 1, 2, keyRasterType, 0, 1, rt, keyGeographicType, 0, 1, epsg}},
	}
}

func TestRead(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		pix := []byte{1, 2, 3, 4, 5, 6}
		data := buildTIFF(order, 3, 2, pix, geoTags(4326, -50, -20, 0.5, 0.25, false)...)
		in, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if in.Width != 3 || in.Height != 2 || in.EPSG != 4326 || in.ModelType != 2 || in.SampleType != "uint8" || !in.Georeferenced {
			t.Errorf("%v: %+v", order, in)
		}
		if b := in.BBox; b.MinX != -50 || b.MaxX != -48.5 || b.MaxY != -20 || b.MinY != -20.5 {
			t.Errorf("%v: bbox %+v", order, b)
		}
		g, err := in.Sample(3, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range g.Values {
			if v != float64(pix[i]) {
				t.Fatalf("%v: sampled %v, want %v", order, g.Values, pix)
			}
		}
		g, _ = in.Sample(1, 1) // the middle pixel of the 3×2 image... nearest to the centre
		if g.W != 1 || g.H != 1 || g.Values[0] != 5 {
			t.Errorf("1×1 sample %+v", g)
		}
	}
	// PixelIsPoint moves the extent half a pixel, as GDAL does.
	data := buildTIFF(binary.LittleEndian, 2, 2, []byte{0, 0, 0, 0}, geoTags(4326, 10, 20, 1, 1, true)...)
	in, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if b := in.BBox; b.MinX != 9.5 || b.MaxY != 20.5 || b.MaxX != 11.5 || b.MinY != 18.5 {
		t.Errorf("PixelIsPoint bbox %+v", b)
	}
}

func TestReadErrors(t *testing.T) {
	good := buildTIFF(binary.LittleEndian, 3, 2, []byte{1, 2, 3, 4, 5, 6}, geoTags(4326, 0, 0, 1, 1, false)...)
	for name, data := range map[string][]byte{
		"empty":      {},
		"not tiff":   []byte("PK\x03\x04 not a tiff at all"),
		"bad ifd":    func() []byte { b := bytes.Clone(good); binary.LittleEndian.PutUint32(b[4:], 1<<30); return b }(),
		"cut":        good[:20],
		"zero width": buildTIFF(binary.LittleEndian, 0, 2, nil),
	} {
		if _, err := Read(bytes.NewReader(data), int64(len(data))); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The spData rasters are 6×6 LZW-compressed WGS 84 grids (their values are checked against
// GDAL in package geo's cross-check test).
func TestRealFiles(t *testing.T) {
	for _, name := range []string{"elev.tif", "grain.tif"} {
		data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "geo"), "spdata", name))
		if err != nil {
			t.Fatal(err)
		}
		in, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if in.EPSG != 4326 || in.Width != 6 || in.Height != 6 || in.Compression != 5 {
			t.Errorf("%s: %+v", name, in)
		}
		g, err := in.Sample(256, 256)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		valid := 0
		for _, v := range g.Values {
			if !math.IsNaN(v) {
				valid++
			}
		}
		if g.W != 6 || valid == 0 {
			t.Errorf("%s: sampled %d×%d with %d values", name, g.W, g.H, valid)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(buildTIFF(binary.LittleEndian, 3, 2, []byte{1, 2, 3, 4, 5, 6}, geoTags(4326, -50, -20, 0.5, 0.25, false)...))
	f.Add(buildTIFF(binary.BigEndian, 1, 1, []byte{9}, geoTags(32723, 300000, 7000000, 30, 30, true)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		_, _ = in.Sample(16, 16)
	})
}

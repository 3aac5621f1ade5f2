package geotiff

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"

	"golang.org/x/image/tiff/lzw"
)

// Grid is a downsampled band: W×H values, row by row from the top; NaN marks no data.
type Grid struct {
	W, H   int
	Values []float64
}

// MaxDecodedBytes bounds the pixel data Sample decompresses: a thumbnail of a huge raster
// is made from the part that fits, never from an unbounded decode.
const MaxDecodedBytes = 256 << 20

// Sample reads the first band into a grid of at most maxW×maxH cells (nearest neighbour),
// keeping the raster's aspect ratio. Supported: uncompressed, LZW, Deflate and PackBits
// data, horizontal and floating-point predictors, integer and float samples of 8 to 64 bits.
func (in *Info) Sample(maxW, maxH int) (*Grid, error) {
	if in.bits%8 != 0 || in.bits == 0 || in.bits > 64 {
		return nil, fmt.Errorf("geotiff: %d bits per sample cannot be sampled", in.bits)
	}
	switch in.Compression {
	case 1, 5, 8, 32946, 32773:
	default:
		return nil, fmt.Errorf("geotiff: compression %d cannot be sampled", in.Compression)
	}
	ow, oh := in.Width, in.Height
	if ow > maxW || oh > maxH {
		s := math.Min(float64(maxW)/float64(ow), float64(maxH)/float64(oh))
		ow, oh = max(1, int(float64(ow)*s)), max(1, int(float64(oh)*s))
	}
	g := &Grid{W: ow, H: oh, Values: make([]float64, ow*oh)}
	for i := range g.Values {
		g.Values[i] = math.NaN()
	}
	cw, ch := in.Width, 0
	var offsets, counts []uint64
	var err error
	tiled := in.ifd[tagTileOffsets].count > 0
	if tiled {
		if cw, err = in.uint(tagTileWidth, 0); err != nil {
			return nil, err
		}
		if ch, err = in.uint(tagTileLength, 0); err != nil {
			return nil, err
		}
		if offsets, err = in.uints(tagTileOffsets); err != nil {
			return nil, err
		}
		if counts, err = in.uints(tagTileByteCounts); err != nil {
			return nil, err
		}
	} else {
		if ch, err = in.uint(tagRowsPerStrip, in.Height); err != nil {
			return nil, err
		}
		ch = min(max(ch, 1), in.Height)
		if offsets, err = in.uints(tagStripOffsets); err != nil {
			return nil, err
		}
		if counts, err = in.uints(tagStripByteCounts); err != nil {
			return nil, err
		}
	}
	if cw <= 0 || ch <= 0 || len(offsets) == 0 || len(counts) < len(offsets) {
		return nil, errors.New("geotiff: missing or inconsistent strip/tile layout")
	}
	bps := in.bits / 8
	pixStride := bps // the first band only
	if in.planar != 2 {
		pixStride *= in.Bands
	}
	across := (in.Width + cw - 1) / cw
	down := (in.Height + ch - 1) / ch
	if int64(across)*int64(down) > int64(len(offsets)) {
		return nil, fmt.Errorf("geotiff: %d chunks needed, %d offsets given", across*down, len(offsets))
	}
	budget := int64(MaxDecodedBytes)
	chunkBytes := int64(cw) * int64(ch) * int64(pixStride)
	for cy := 0; cy < down; cy++ {
		for cx := 0; cx < across; cx++ {
			idx := cy*across + cx // band 1 is the first plane when planar
			// Which output cells fall in this chunk?
			x0, y0 := cx*cw, cy*ch
			x1, y1 := min(x0+cw, in.Width), min(y0+ch, in.Height)
			oxs, oys := cells(x0, x1, in.Width, ow), cells(y0, y1, in.Height, oh)
			if len(oxs) == 0 || len(oys) == 0 {
				continue
			}
			if budget -= chunkBytes; budget < 0 {
				return g, nil // enough for a picture; the rest stays blank
			}
			data, err := in.chunk(int64(offsets[idx]), int64(counts[idx]), chunkBytes)
			if err != nil {
				return nil, fmt.Errorf("geotiff: chunk %d: %w", idx, err)
			}
			rowBytes := cw * pixStride
			if err := in.unpredict(data, rowBytes, pixStride, bps); err != nil {
				return nil, err
			}
			for _, oy := range oys {
				sy := src(oy, in.Height, oh) - y0
				for _, ox := range oxs {
					sx := src(ox, in.Width, ow) - x0
					at := sy*rowBytes + sx*pixStride
					if at+bps > len(data) {
						continue
					}
					v := in.value(data[at : at+bps])
					if in.NoData != nil && v == *in.NoData {
						v = math.NaN()
					}
					g.Values[oy*ow+ox] = v
				}
			}
		}
	}
	return g, nil
}

// src is the source pixel an output cell samples (its centre).
func src(o, n, on int) int { return min(n-1, int((float64(o)+0.5)*float64(n)/float64(on))) }

// cells lists the output cells whose source pixel lies in [a, b).
func cells(a, b, n, on int) []int {
	var out []int
	lo := max(0, int(float64(a)*float64(on)/float64(n))-1)
	for o := lo; o < on; o++ {
		s := src(o, n, on)
		if s >= b {
			break
		}
		if s >= a {
			out = append(out, o)
		}
	}
	return out
}

func (in *Info) chunk(off, n, want int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > in.f.size {
		return nil, fmt.Errorf("%d bytes at %d lie outside the %d-byte file", n, off, in.f.size)
	}
	raw := make([]byte, n)
	if _, err := in.f.r.ReadAt(raw, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var rd io.Reader
	switch in.Compression {
	case 1:
		if int64(len(raw)) < want {
			raw = append(raw, make([]byte, want-int64(len(raw)))...)
		}
		return raw, nil
	case 5:
		rd = lzw.NewReader(bytes.NewReader(raw), lzw.MSB, 8)
	case 8, 32946:
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("deflate: %w", err)
		}
		rd = zr
	case 32773:
		return packBits(raw, want)
	}
	out := make([]byte, want)
	nr, err := io.ReadFull(rd, out)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return out[:max(nr, 0)], nil
}

func packBits(src []byte, want int64) ([]byte, error) {
	out := make([]byte, 0, want)
	for i := 0; i < len(src) && int64(len(out)) < want; {
		n := int(int8(src[i]))
		i++
		switch {
		case n >= 0:
			if i+n+1 > len(src) {
				return out, nil
			}
			out = append(out, src[i:i+n+1]...)
			i += n + 1
		case n != -128:
			if i >= len(src) {
				return out, nil
			}
			for j := 0; j < 1-n; j++ {
				out = append(out, src[i])
			}
			i++
		}
	}
	return out, nil
}

// unpredict undoes the horizontal (2) and floating-point (3) predictors in place.
func (in *Info) unpredict(data []byte, rowBytes, stride, bps int) error {
	switch in.predictor {
	case 1:
		return nil
	case 2:
		o := in.f.order
		for r := 0; r+rowBytes <= len(data); r += rowBytes {
			row := data[r : r+rowBytes]
			for i := stride; i+bps <= len(row); i += bps {
				switch bps {
				case 1:
					row[i] += row[i-stride]
				case 2:
					o.PutUint16(row[i:], o.Uint16(row[i:])+o.Uint16(row[i-stride:]))
				case 4:
					o.PutUint32(row[i:], o.Uint32(row[i:])+o.Uint32(row[i-stride:]))
				case 8:
					o.PutUint64(row[i:], o.Uint64(row[i:])+o.Uint64(row[i-stride:]))
				}
			}
		}
		return nil
	case 3:
		// Bytes are differenced across the row, then stored most significant byte plane
		// first; the result is big-endian whatever the file's byte order.
		tmp := make([]byte, rowBytes)
		for r := 0; r+rowBytes <= len(data); r += rowBytes {
			row := data[r : r+rowBytes]
			for i := stride / bps; i < rowBytes; i++ {
				row[i] += row[i-stride/bps]
			}
			n := rowBytes / bps
			for i := 0; i < n; i++ {
				for b := 0; b < bps; b++ {
					tmp[i*bps+b] = row[b*n+i]
				}
			}
			if in.f.order.String() == "LittleEndian" {
				for i := 0; i < n; i++ {
					for b := 0; b < bps/2; b++ {
						tmp[i*bps+b], tmp[i*bps+bps-1-b] = tmp[i*bps+bps-1-b], tmp[i*bps+b]
					}
				}
			}
			copy(row, tmp)
		}
		return nil
	}
	return fmt.Errorf("geotiff: predictor %d is not supported", in.predictor)
}

func (in *Info) value(b []byte) float64 {
	o := in.f.order
	switch in.format {
	case 3:
		if len(b) == 4 {
			return float64(math.Float32frombits(o.Uint32(b)))
		}
		if len(b) == 8 {
			return math.Float64frombits(o.Uint64(b))
		}
	case 2:
		switch len(b) {
		case 1:
			return float64(int8(b[0]))
		case 2:
			return float64(int16(o.Uint16(b)))
		case 4:
			return float64(int32(o.Uint32(b)))
		case 8:
			return float64(int64(o.Uint64(b)))
		}
	default:
		switch len(b) {
		case 1:
			return float64(b[0])
		case 2:
			return float64(o.Uint16(b))
		case 4:
			return float64(o.Uint32(b))
		case 8:
			return float64(o.Uint64(b))
		}
	}
	return math.NaN()
}

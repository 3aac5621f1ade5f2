// Package geotiff reads what sonda needs from a GeoTIFF: the image size, the georeferencing
// (tie points and pixel scale, or a transformation matrix), the GeoKeys that name the CRS,
// and a downsampled first band for a thumbnail.
//
// It parses the TIFF structure itself (classic and BigTIFF, both byte orders) because
// golang.org/x/image/tiff exposes neither private tags nor floating-point samples. Every
// offset and count is checked against the file size before it is used, so a broken file
// gives an error naming the tag, never a panic or an allocation the file cannot back.
package geotiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sonda-search/sonda/geo/geom"
)

// TIFF and GeoTIFF tags used here.
const (
	tagImageWidth      = 256
	tagImageLength     = 257
	tagBitsPerSample   = 258
	tagCompression     = 259
	tagPhotometric     = 262
	tagStripOffsets    = 273
	tagSamplesPerPixel = 277
	tagRowsPerStrip    = 278
	tagStripByteCounts = 279
	tagPlanarConfig    = 284
	tagPredictor       = 317
	tagTileWidth       = 322
	tagTileLength      = 323
	tagTileOffsets     = 324
	tagTileByteCounts  = 325
	tagSampleFormat    = 339
	tagPixelScale      = 33550
	tagTiepoint        = 33922
	tagTransformation  = 34264
	tagGeoKeys         = 34735
	tagGeoDoubles      = 34736
	tagGeoASCII        = 34737
	tagGDALNoData      = 42113
)

// GeoKey IDs.
const (
	keyModelType      = 1024
	keyRasterType     = 1025
	keyCitation       = 1026
	keyGeographicType = 2048
	keyGeogCitation   = 2049
	keyProjectedType  = 3072
	keyPCSCitation    = 3073
	keyProjection     = 3074
)

// Info is a GeoTIFF's metadata.
type Info struct {
	Width, Height int
	Bands         int
	SampleType    string // "uint8", "int16", "float32", ...
	Compression   int
	// BBox is the raster's extent in its CRS: the outer edges of the corner pixels.
	BBox geom.BBox
	// PixelSizeX, PixelSizeY are the pixel dimensions in CRS units (0 when rotated).
	PixelSizeX, PixelSizeY float64
	// Transform maps a pixel position (column, row; 0,0 is the outer corner of the first
	// pixel) to CRS coordinates as GDAL's geotransform does: X = T0 + col·T1 + row·T2,
	// Y = T3 + col·T4 + row·T5. A rotated raster's outline is not its BBox.
	Transform [6]float64
	ModelType int // 1 projected, 2 geographic, 3 geocentric (GTModelTypeGeoKey)
	EPSG      int // ProjectedCSTypeGeoKey or GeographicTypeGeoKey, 0 when user-defined
	// UserProjected says the raster is projected (ModelType 1) by a projection its GeoKeys
	// define themselves (ProjectedCSTypeGeoKey 32767, or none): EPSG is then 0 even when a
	// geographic code names its datum, since that code describes no coordinate of it.
	UserProjected bool
	Citation      string // GTCitation / PCSCitation / GeogCitation text
	// GeoKeys holds every numeric GeoKey by ID: a SHORT key as its one value, a key stored
	// in GeoDoubleParamsTag as its doubles. crs.FromGeoKeys reads a CRS from them.
	GeoKeys       map[uint16][]float64
	Georeferenced bool // the file carries a tie point and scale or a transformation
	NoData        *float64

	f          *file
	ifd        map[uint16]entry
	projection int // ProjectionGeoKey
	predictor  int
	planar     int
	bits       int
	format     int // 1 uint, 2 int, 3 float
}

// ErrNotTIFF means the data does not start with a TIFF header.
var ErrNotTIFF = errors.New("geotiff: not a TIFF file")

type file struct {
	r       io.ReaderAt
	size    int64
	order   binary.ByteOrder
	bigTIFF bool
}

type entry struct {
	typ   uint16
	count uint64
	off   int64 // where the value bytes are (inline values point into the IFD itself)
}

const maxIFDEntries = 4096

// Read parses the first image of a GeoTIFF of the given size.
func Read(r io.ReaderAt, size int64) (*Info, error) {
	f := &file{r: r, size: size}
	var h [16]byte
	if size < 8 {
		return nil, ErrNotTIFF
	}
	if _, err := r.ReadAt(h[:min(16, size)], 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("geotiff: header: %w", err)
	}
	switch string(h[:2]) {
	case "II":
		f.order = binary.LittleEndian
	case "MM":
		f.order = binary.BigEndian
	default:
		return nil, ErrNotTIFF
	}
	var ifdOff int64
	switch f.order.Uint16(h[2:]) {
	case 42:
		ifdOff = int64(f.order.Uint32(h[4:]))
	case 43:
		if size < 16 || f.order.Uint16(h[4:]) != 8 {
			return nil, errors.New("geotiff: malformed BigTIFF header")
		}
		f.bigTIFF = true
		ifdOff = int64(f.order.Uint64(h[8:]))
	default:
		return nil, ErrNotTIFF
	}
	ifd, err := f.readIFD(ifdOff)
	if err != nil {
		return nil, err
	}
	info := &Info{f: f, ifd: ifd}
	return info, info.parse()
}

func typeSize(t uint16) int {
	switch t {
	case 1, 2, 6, 7: // BYTE ASCII SBYTE UNDEFINED
		return 1
	case 3, 8: // SHORT SSHORT
		return 2
	case 4, 9, 11, 13: // LONG SLONG FLOAT IFD
		return 4
	case 5, 10, 12, 16, 17, 18: // RATIONAL SRATIONAL DOUBLE LONG8 SLONG8 IFD8
		return 8
	}
	return 0
}

func (f *file) readIFD(off int64) (map[uint16]entry, error) {
	countLen, entryLen, valLen := int64(2), int64(12), int64(4)
	if f.bigTIFF {
		countLen, entryLen, valLen = 8, 20, 8
	}
	if off < 8 || off+countLen > f.size {
		return nil, fmt.Errorf("geotiff: first IFD offset %d is outside the %d-byte file", off, f.size)
	}
	cb := make([]byte, countLen)
	if _, err := f.r.ReadAt(cb, off); err != nil {
		return nil, fmt.Errorf("geotiff: IFD: %w", err)
	}
	var n uint64
	if f.bigTIFF {
		n = f.order.Uint64(cb)
	} else {
		n = uint64(f.order.Uint16(cb))
	}
	if n == 0 || n > maxIFDEntries || off+countLen+int64(n)*entryLen > f.size {
		return nil, fmt.Errorf("geotiff: IFD at byte %d claims %d entries", off, n)
	}
	buf := make([]byte, int64(n)*entryLen)
	if _, err := f.r.ReadAt(buf, off+countLen); err != nil {
		return nil, fmt.Errorf("geotiff: IFD: %w", err)
	}
	out := make(map[uint16]entry, n)
	for i := uint64(0); i < n; i++ {
		e := buf[int64(i)*entryLen:]
		tag, typ := f.order.Uint16(e), f.order.Uint16(e[2:])
		var count uint64
		if f.bigTIFF {
			count = f.order.Uint64(e[4:])
		} else {
			count = uint64(f.order.Uint32(e[4:]))
		}
		size := typeSize(typ)
		if size == 0 {
			continue // unknown type: skip the tag, as readers must
		}
		if count > uint64(f.size) {
			return nil, fmt.Errorf("geotiff: tag %d claims %d values in a %d-byte file", tag, count, f.size)
		}
		total := int64(count) * int64(size)
		valAt := off + countLen + int64(i)*entryLen + entryLen - valLen
		if total > valLen {
			if f.bigTIFF {
				valAt = int64(f.order.Uint64(e[12:]))
			} else {
				valAt = int64(f.order.Uint32(e[8:]))
			}
			if valAt < 0 || valAt+total > f.size {
				return nil, fmt.Errorf("geotiff: tag %d's %d values at byte %d lie outside the %d-byte file", tag, count, valAt, f.size)
			}
		}
		out[tag] = entry{typ: typ, count: count, off: valAt}
	}
	return out, nil
}

// maxTagValues bounds the values read from one tag (strip offsets of a huge image are the
// largest legitimate case).
const maxTagValues = 1 << 22

// uints reads an integer tag.
func (in *Info) uints(tag uint16) ([]uint64, error) {
	e, ok := in.ifd[tag]
	if !ok {
		return nil, nil
	}
	if e.count > maxTagValues {
		return nil, fmt.Errorf("geotiff: tag %d has %d values", tag, e.count)
	}
	size := typeSize(e.typ)
	b := make([]byte, int(e.count)*size)
	if _, err := in.f.r.ReadAt(b, e.off); err != nil {
		return nil, fmt.Errorf("geotiff: tag %d: %w", tag, err)
	}
	out := make([]uint64, e.count)
	o := in.f.order
	for i := range out {
		switch e.typ {
		case 1, 6, 7:
			out[i] = uint64(b[i])
		case 3, 8:
			out[i] = uint64(o.Uint16(b[2*i:]))
		case 4, 9, 13:
			out[i] = uint64(o.Uint32(b[4*i:]))
		case 16, 17, 18:
			out[i] = o.Uint64(b[8*i:])
		default:
			return nil, fmt.Errorf("geotiff: tag %d has type %d, not an integer", tag, e.typ)
		}
	}
	return out, nil
}

func (in *Info) uint(tag uint16, def int) (int, error) {
	v, err := in.uints(tag)
	if err != nil || len(v) == 0 {
		return def, err
	}
	if v[0] > math.MaxInt32 {
		return 0, fmt.Errorf("geotiff: tag %d value %d is out of range", tag, v[0])
	}
	return int(v[0]), nil
}

func (in *Info) doubles(tag uint16) ([]float64, error) {
	e, ok := in.ifd[tag]
	if !ok {
		return nil, nil
	}
	if e.count > maxTagValues {
		return nil, fmt.Errorf("geotiff: tag %d has %d values", tag, e.count)
	}
	switch e.typ {
	case 12: // DOUBLE
		b := make([]byte, 8*e.count)
		if _, err := in.f.r.ReadAt(b, e.off); err != nil {
			return nil, fmt.Errorf("geotiff: tag %d: %w", tag, err)
		}
		out := make([]float64, e.count)
		for i := range out {
			out[i] = math.Float64frombits(in.f.order.Uint64(b[8*i:]))
		}
		return out, nil
	case 11: // FLOAT
		b := make([]byte, 4*e.count)
		if _, err := in.f.r.ReadAt(b, e.off); err != nil {
			return nil, fmt.Errorf("geotiff: tag %d: %w", tag, err)
		}
		out := make([]float64, e.count)
		for i := range out {
			out[i] = float64(math.Float32frombits(in.f.order.Uint32(b[4*i:])))
		}
		return out, nil
	}
	return nil, fmt.Errorf("geotiff: tag %d has type %d, not a floating-point number", tag, e.typ)
}

func (in *Info) ascii(tag uint16) (string, error) {
	e, ok := in.ifd[tag]
	if !ok || e.typ != 2 {
		return "", nil
	}
	if e.count > 1<<20 {
		return "", fmt.Errorf("geotiff: tag %d has %d characters", tag, e.count)
	}
	b := make([]byte, e.count)
	if _, err := in.f.r.ReadAt(b, e.off); err != nil {
		return "", fmt.Errorf("geotiff: tag %d: %w", tag, err)
	}
	return string(b), nil
}

func (in *Info) parse() error {
	var err error
	if in.Width, err = in.uint(tagImageWidth, 0); err != nil {
		return err
	}
	if in.Height, err = in.uint(tagImageLength, 0); err != nil {
		return err
	}
	if in.Width <= 0 || in.Height <= 0 {
		return fmt.Errorf("geotiff: image is %d×%d pixels", in.Width, in.Height)
	}
	if in.Bands, err = in.uint(tagSamplesPerPixel, 1); err != nil {
		return err
	}
	if in.Bands < 1 || in.Bands > 1024 {
		return fmt.Errorf("geotiff: %d samples per pixel", in.Bands)
	}
	if in.bits, err = in.uint(tagBitsPerSample, 1); err != nil {
		return err
	}
	if in.format, err = in.uint(tagSampleFormat, 1); err != nil {
		return err
	}
	if in.Compression, err = in.uint(tagCompression, 1); err != nil {
		return err
	}
	if in.predictor, err = in.uint(tagPredictor, 1); err != nil {
		return err
	}
	if in.planar, err = in.uint(tagPlanarConfig, 1); err != nil {
		return err
	}
	in.SampleType = sampleType(in.format, in.bits)
	if nd, _ := in.ascii(tagGDALNoData); nd != "" {
		var v float64
		if _, err := fmt.Sscan(strings.TrimRight(nd, "\x00 "), &v); err == nil {
			in.NoData = &v
		}
	}
	if err := in.georef(); err != nil {
		return err
	}
	return in.geoKeys()
}

func sampleType(format, bits int) string {
	switch format {
	case 2:
		return fmt.Sprintf("int%d", bits)
	case 3:
		return fmt.Sprintf("float%d", bits)
	}
	return fmt.Sprintf("uint%d", bits)
}

// georef sets BBox from the tie point and scale, or from the transformation matrix.
func (in *Info) georef() error {
	scale, err := in.doubles(tagPixelScale)
	if err != nil {
		return err
	}
	ties, err := in.doubles(tagTiepoint)
	if err != nil {
		return err
	}
	matrix, err := in.doubles(tagTransformation)
	if err != nil {
		return err
	}
	w, h := float64(in.Width), float64(in.Height)
	// PixelIsPoint rasters put the tie point at a pixel centre: GDAL (and so sonda) moves the
	// origin half a pixel to the corner so that the extent covers whole pixels.
	shift := 0.0
	if rt, _ := in.geoKeyShort(keyRasterType); rt == 2 {
		shift = 0.5
	}
	switch {
	case len(scale) >= 2 && len(ties) >= 6:
		sx, sy := scale[0], scale[1]
		x0 := ties[3] - (ties[0]+shift)*sx
		y0 := ties[4] + (ties[1]+shift)*sy
		in.BBox = geom.Empty()
		in.BBox.Extend(x0, y0)
		in.BBox.Extend(x0+w*sx, y0-h*sy)
		in.PixelSizeX, in.PixelSizeY = sx, sy
		in.Transform = [6]float64{x0, sx, 0, y0, 0, -sy}
		in.Georeferenced = true
	case len(matrix) >= 16:
		m := matrix
		in.BBox = geom.Empty()
		for _, c := range [][2]float64{{-shift, -shift}, {w - shift, -shift}, {-shift, h - shift}, {w - shift, h - shift}} {
			in.BBox.Extend(m[0]*c[0]+m[1]*c[1]+m[3], m[4]*c[0]+m[5]*c[1]+m[7])
		}
		if m[1] == 0 && m[4] == 0 {
			in.PixelSizeX, in.PixelSizeY = math.Abs(m[0]), math.Abs(m[5])
		}
		// The matrix maps raster space (which PixelIsPoint shifts by half a pixel) to model space.
		in.Transform = [6]float64{m[3] - shift*(m[0]+m[1]), m[0], m[1], m[7] - shift*(m[4]+m[5]), m[4], m[5]}
		in.Georeferenced = true
	default:
		in.BBox = geom.Empty()
	}
	return nil
}

// geoKeyShort returns a GeoKey stored inline in the key directory.
func (in *Info) geoKeyShort(id uint16) (int, bool) {
	keys, err := in.uints(tagGeoKeys)
	if err != nil || len(keys) < 4 {
		return 0, false
	}
	n := int(keys[3])
	for i := 0; i < n && 4+4*i+3 < len(keys); i++ {
		k := keys[4+4*i:]
		if uint16(k[0]) == id && k[1] == 0 {
			return int(k[3]), true
		}
	}
	return 0, false
}

func (in *Info) geoKeys() error {
	keys, err := in.uints(tagGeoKeys)
	if err != nil {
		return err
	}
	if len(keys) < 4 {
		return nil
	}
	asciiParams, err := in.ascii(tagGeoASCII)
	if err != nil {
		return err
	}
	doubleParams, err := in.doubles(tagGeoDoubles)
	if err != nil {
		return err
	}
	n := int(keys[3])
	var citations []string
	in.GeoKeys = make(map[uint16][]float64, n)
	for i := 0; i < n && 4+4*i+3 < len(keys); i++ {
		k := keys[4+4*i:]
		id, loc, count, val := uint16(k[0]), k[1], int(k[2]), int(k[3])
		switch {
		case loc == 0:
			in.GeoKeys[id] = []float64{float64(val)}
			switch id {
			case keyModelType:
				in.ModelType = val
			case keyGeographicType:
				if in.EPSG == 0 && val > 0 && val < 32767 {
					in.EPSG = val
				}
			case keyProjectedType:
				if val > 0 && val < 32767 {
					in.EPSG = val
				}
			case keyProjection:
				// EPSG projection codes 16001-16060 and 16101-16160 are UTM zones on the
				// geographic CRS given separately: resolved by the caller from Projection().
				in.projection = val
			}
		case loc == tagGeoDoubles:
			// An offset or count outside the doubles leaves the key out: the CRS reader then
			// says which parameter is missing.
			if count > 0 && val+count <= len(doubleParams) {
				in.GeoKeys[id] = doubleParams[val : val+count]
			}
		case loc == tagGeoASCII && (id == keyCitation || id == keyPCSCitation || id == keyGeogCitation):
			if val >= 0 && count > 0 && val+count <= len(asciiParams) {
				c := strings.TrimRight(asciiParams[val:val+count], "|\x00 ")
				if c != "" {
					citations = append(citations, c)
				}
			}
		}
	}
	in.Citation = strings.Join(citations, "; ")
	if in.ModelType == 1 && in.EPSG >= 4000 && in.EPSG < 5000 && in.projection != 0 {
		// Projected model with only a geographic code: the projection key names the zone.
		if z := in.projection; z > 16000 && z <= 16060 {
			in.EPSG = utmCode(in.EPSG, z-16000, false)
		} else if z > 16100 && z <= 16160 {
			in.EPSG = utmCode(in.EPSG, z-16100, true)
		}
	}
	if in.ModelType == 1 && (in.EPSG == 0 || in.EPSG >= 4000 && in.EPSG < 5000) {
		// Still only a geographic code (or none) on a projected raster: its coordinates
		// are in a projection we were not given by code. Reading them as degrees was how
		// an Oblique Stereographic raster became "EPSG:4326" with metres for degrees.
		in.EPSG, in.UserProjected = 0, true
	}
	return nil
}

// utmCode is the EPSG code of UTM zone z on the WGS 84 datum (the only user-defined
// combination common enough to resolve; other datums keep the geographic code).
func utmCode(geog, zone int, south bool) int {
	if geog != 4326 {
		return geog
	}
	if south {
		return 32700 + zone
	}
	return 32600 + zone
}

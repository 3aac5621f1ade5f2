package gazetteer

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The file is gzip-compressed: the magic "SGZ1", a uvarint count, then per place:
//
//	kind (1 byte), country (2 bytes), name, region (uvarint length + UTF-8 each),
//	population (uvarint), lon, lat (zigzag varint deltas from the previous place, in units
//	of 1e-5 degree), and for regions and countries the box as four more zigzag varints
//	(min lon, min lat, max lon, max lat, as differences from the place's lon/lat).
//
// Sorting places by country (as gen does) keeps the deltas small.
const magic = "SGZ1"

const scale = 1e5

func q(v float64) int64 { return int64(math.Round(v * scale)) }

// Encode writes places in the format Decode reads.
func Encode(w io.Writer, places []Place) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	var buf [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	sv := func(v int64) { bw.Write(buf[:binary.PutVarint(buf[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); bw.WriteString(s) }
	bw.WriteString(magic)
	uv(uint64(len(places)))
	var lon, lat int64
	for _, p := range places {
		if len(p.Country) != 2 {
			return fmt.Errorf("gazetteer: %q has country %q, want two letters", p.Name, p.Country)
		}
		bw.WriteByte(byte(p.Kind))
		bw.WriteString(p.Country)
		str(p.Name)
		str(p.Region)
		uv(uint64(max(p.Population, 0)))
		x, y := q(p.Lon), q(p.Lat)
		sv(x - lon)
		sv(y - lat)
		lon, lat = x, y
		if p.Kind != City {
			sv(q(p.MinLon) - x)
			sv(q(p.MinLat) - y)
			sv(q(p.MaxLon) - x)
			sv(q(p.MaxLat) - y)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// maxPlaces bounds a decoded file.
const maxPlaces = 10_000_000

// Decode reads what Encode writes.
func Decode(r io.Reader) ([]Place, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gazetteer: %w", err)
	}
	br := bufio.NewReader(zr)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != magic {
		return nil, errors.New("gazetteer: not a gazetteer file")
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxPlaces {
		return nil, fmt.Errorf("gazetteer: bad place count")
	}
	str := func() (string, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > 1024 {
			return "", errors.New("bad string")
		}
		b := make([]byte, l)
		_, err = io.ReadFull(br, b)
		return string(b), err
	}
	places := make([]Place, 0, n)
	var lon, lat int64
	for i := uint64(0); i < n; i++ {
		var p Place
		var hdr [3]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, fmt.Errorf("gazetteer: place %d: %w", i, err)
		}
		p.Kind, p.Country = Kind(hdr[0]), string(hdr[1:])
		if p.Name, err = str(); err != nil {
			return nil, fmt.Errorf("gazetteer: place %d name: %w", i, err)
		}
		if p.Region, err = str(); err != nil {
			return nil, fmt.Errorf("gazetteer: place %d region: %w", i, err)
		}
		pop, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("gazetteer: place %d: %w", i, err)
		}
		p.Population = int64(pop)
		var d [6]int64
		k := 2
		if p.Kind != City {
			k = 6
		}
		for j := 0; j < k; j++ {
			if d[j], err = binary.ReadVarint(br); err != nil {
				return nil, fmt.Errorf("gazetteer: place %d: %w", i, err)
			}
		}
		lon, lat = lon+d[0], lat+d[1]
		p.Lon, p.Lat = float64(lon)/scale, float64(lat)/scale
		if p.Kind != City {
			p.MinLon, p.MinLat = float64(lon+d[2])/scale, float64(lat+d[3])/scale
			p.MaxLon, p.MaxLat = float64(lon+d[4])/scale, float64(lat+d[5])/scale
		}
		places = append(places, p)
	}
	return places, nil
}

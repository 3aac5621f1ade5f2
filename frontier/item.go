package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Item is one URL waiting in the frontier.
type Item struct {
	URL      string
	Key      [16]byte // urlnorm key of URL: the seen-set identity
	Host     string   // urlnorm host key: the politeness queue the URL waits in
	Priority float64  // higher is fetched sooner within a host and across ready hosts
	Depth    int      // link hops from a seed
	Parent   string   // the page the URL was found on; "" for seeds
	// Via lists the redirect hops that led to this URL, oldest first, so the crawler can
	// spot redirect loops and enforce its hop limit.
	Via []string
	// Attempts counts failed fetches that were retried (5xx, 429, timeouts).
	Attempts int
	// Visits counts completed fetches; non-zero for revisits.
	Visits int
	// Due is when the item may be fetched; zero for new URLs (fetchable at once).
	Due time.Time
	// Discovered is when the URL first entered the frontier.
	Discovered time.Time
}

const itemVersion = 1

var errBadItem = errors.New("frontier: corrupt queue entry")

func (it *Item) marshal() []byte {
	b := make([]byte, 0, 64+len(it.URL)+len(it.Parent)+len(it.Host))
	b = append(b, itemVersion)
	b = appendString(b, it.URL)
	b = append(b, it.Key[:]...)
	b = appendString(b, it.Host)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(it.Priority))
	b = binary.AppendUvarint(b, uint64(it.Depth))
	b = appendString(b, it.Parent)
	b = binary.AppendUvarint(b, uint64(len(it.Via)))
	for _, v := range it.Via {
		b = appendString(b, v)
	}
	b = binary.AppendUvarint(b, uint64(it.Attempts))
	b = binary.AppendUvarint(b, uint64(it.Visits))
	b = binary.AppendVarint(b, unixNano(it.Due))
	b = binary.AppendVarint(b, unixNano(it.Discovered))
	return b
}

func (it *Item) unmarshal(b []byte) error {
	d := decoder{b: b}
	if v := d.byte(); v != itemVersion {
		return fmt.Errorf("%w: version %d", errBadItem, v)
	}
	it.URL = d.string()
	copy(it.Key[:], d.bytes(16))
	it.Host = d.string()
	it.Priority = math.Float64frombits(d.uint64())
	it.Depth = int(d.uvarint())
	it.Parent = d.string()
	if n := d.uvarint(); n > 0 && n < 64 {
		it.Via = make([]string, n)
		for i := range it.Via {
			it.Via[i] = d.string()
		}
	}
	it.Attempts = int(d.uvarint())
	it.Visits = int(d.uvarint())
	it.Due = fromUnixNano(d.varint())
	it.Discovered = fromUnixNano(d.varint())
	if d.err {
		return errBadItem
	}
	return nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads the item encoding; a short or malformed input sets err instead of panicking.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.err = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes(n int) []byte {
	if n < 0 || len(d.b) < n {
		d.err = true
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	v := d.bytes(8)
	if v == nil {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = true
		return ""
	}
	return string(d.bytes(int(n)))
}

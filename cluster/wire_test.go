package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sonda-search/sonda/frontier"
)

func wireItems() []wireItem {
	key := []byte("0123456789abcdef")
	at := time.Unix(1795000000, 123456789)
	return []wireItem{
		{Key: key, Done: true},
		{URL: "http://a.test/x?y=1", Key: key, Host: "a.test", Priority: 0.75, Depth: 3, Discovered: at},
		{URL: "https://b.test/ü", Key: key, Host: "b.test:8443", Priority: -1.5, Depth: 1, Parent: "https://b.test/",
			Via: []string{"sitemap", "https://b.test/sitemap.xml"}, Attempts: 2, Visits: 7, Due: at.Add(time.Hour), Discovered: at, Refetch: true},
		{},
	}
}

// equalItems compares two wireItems, times by instant (the wire keeps no location).
func equalItems(a, b wireItem) bool {
	if !a.Due.Equal(b.Due) || !a.Discovered.Equal(b.Discovered) {
		return false
	}
	a.Due, b.Due, a.Discovered, b.Discovered = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if len(a.Key) == 0 && len(b.Key) == 0 {
		a.Key, b.Key = nil, nil
	}
	if len(a.Via) == 0 && len(b.Via) == 0 {
		a.Via, b.Via = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// TestWireItem: every field survives the binary form, which is smaller than the JSON
// earlier nodes sent; that JSON is still read, and a later version is refused as such.
func TestWireItem(t *testing.T) {
	for _, w := range wireItems() {
		b := encodeItem(w)
		if b[0] != wireV1 {
			t.Fatalf("first byte %d, want the version %d", b[0], wireV1)
		}
		got, err := decodeItem(b)
		if err != nil || !equalItems(got, w) {
			t.Errorf("round trip of %+v: %+v, %v", w, got, err)
		}
		old, _ := json.Marshal(w) // what an earlier node sent
		if len(b) >= len(old) && len(w.Key) > 0 {
			t.Errorf("binary %d bytes, JSON %d: want smaller", len(b), len(old))
		}
		if got, err := decodeItem(old); err != nil || !equalItems(got, w) {
			t.Errorf("JSON of an earlier node %s: %+v, %v", old, got, err)
		}
		// A later version may append fields: this one reads what it knows.
		if got, err := decodeItem(append(b, 0xff, 0x01)); err != nil || !equalItems(got, w) {
			t.Errorf("with trailing bytes: %+v, %v", got, err)
		}
		for i := 1; i < len(b); i++ {
			if _, err := decodeItem(b[:i]); err == nil {
				t.Errorf("truncated to %d bytes: no error", i)
			}
		}
	}
	newer := append([]byte{wireV1 + 1}, encodeItem(wireItems()[1])[1:]...)
	if _, err := decodeItem(newer); !errors.Is(err, errNewerWire) {
		t.Errorf("version %d: %v, want errNewerWire", wireV1+1, err)
	}
	for _, bad := range [][]byte{nil, {wireV1}, {wireV1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, []byte("{not json")} {
		if _, err := decodeItem(bad); err == nil || errors.Is(err, errNewerWire) {
			t.Errorf("decodeItem(%q) = %v, want a malformed-message error", bad, err)
		}
	}
}

// TestWireEdges: a page's links survive the binary form; earlier nodes' JSON is read, and
// their binary form, which ends after the links (no first-fetch flag: the page may have
// sent links before); a message without a source page or of a later version is refused.
func TestWireEdges(t *testing.T) {
	e := edgesMsg{Src: "http://a.test/", Run: "0a1b2c", Links: []edgeLink{{URL: "http://b.test/x", Anchor: "the x"}, {URL: "http://c.test/"}}, First: true}
	b := encodeEdges(e)
	if got, err := decodeEdges(b); err != nil || !reflect.DeepEqual(got, e) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	if got, err := decodeEdges(b[:len(b)-1]); err != nil || got.First || !reflect.DeepEqual(got.Links, e.Links) {
		t.Errorf("an earlier node's binary form: %+v, %v", got, err)
	}
	old, _ := json.Marshal(e)
	if got, err := decodeEdges(old); err != nil || !reflect.DeepEqual(got, e) {
		t.Errorf("JSON of an earlier node: %+v, %v", got, err)
	}
	if len(b) >= len(old) {
		t.Errorf("binary %d bytes, JSON %d: want smaller", len(b), len(old))
	}
	if _, err := decodeEdges(encodeEdges(edgesMsg{Links: e.Links})); err == nil {
		t.Error("no source page: no error")
	}
	if _, err := decodeEdges(append([]byte{wireV1 + 1}, b[1:]...)); !errors.Is(err, errNewerWire) {
		t.Errorf("later version: %v, want errNewerWire", err)
	}
	// A link count the message cannot hold is an error, not an allocation.
	huge := append([]byte{wireV1}, appendBytes(appendBytes(nil, []byte("http://a.test/")), nil)...)
	huge = append(huge, 0xff, 0xff, 0xff, 0xff, 0x0f)
	if _, err := decodeEdges(huge); err == nil {
		t.Error("a count of 2^32 links in a short message: no error")
	}
}

// FuzzDecodeItem: decoding never panics, and what decodes as the binary form encodes
// back to a message that decodes the same. The seeds in testdata/fuzz/FuzzDecodeItem run
// with every go test.
func FuzzDecodeItem(f *testing.F) {
	for _, w := range wireItems() {
		f.Add(encodeItem(w))
		old, _ := json.Marshal(w)
		f.Add(old)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeItem(b)
		if err != nil || len(b) == 0 || b[0] != wireV1 {
			return
		}
		again, err := decodeItem(encodeItem(w))
		if err != nil || !equalItems(again, w) {
			t.Fatalf("%x decodes to %+v, which round-trips to %+v, %v", b, w, again, err)
		}
	})
}

// FuzzDecodeEdges is FuzzDecodeItem for a page's links.
func FuzzDecodeEdges(f *testing.F) {
	f.Add(encodeEdges(edgesMsg{Src: "http://a.test/", Run: "r", Links: []edgeLink{{URL: "http://b.test/", Anchor: "b"}}}))
	f.Add([]byte(`{"src":"http://a.test/","l":[{"u":"http://b.test/"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEdges(b)
		if err != nil || len(b) == 0 || b[0] != wireV1 {
			return
		}
		again, err := decodeEdges(encodeEdges(e))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("%x decodes to %+v, which round-trips to %+v, %v", b, e, again, err)
		}
	})
}

// TestNewerWireRefused: a node meets messages written in a wire format version it does not
// know (by a newer node in a cluster being upgraded). A routed URL is neither admitted nor
// dropped: it stays in JetStream, unacknowledged, while the others are admitted. A
// partition whose record holds such a state is not rebuilt without it.
func TestNewerWireRefused(t *testing.T) {
	ctx, a := loneNode(t)
	ok := testItem("www.example.org", "/ok")
	p := a.partitionOf(ok.Host)
	newer := testItem("www.example.org", "/newer")
	takeNow(t, ctx, a, p)
	later := encodeItem(toWire(newer))
	later[0] = wireV1 + 1
	for _, b := range [][]byte{later, encodeItem(toWire(ok))} {
		if _, err := a.js.Publish(ctx, a.names.links(p), b); err != nil {
			t.Fatal(err)
		}
	}
	for seen, _ := a.fr.Seen(ok.Key); !seen; seen, _ = a.fr.Seen(ok.Key) {
		if ctx.Err() != nil {
			t.Fatal("the routed URL in the known format was not admitted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		info, err := a.links.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 1 {
			break
		}
		if info.State.Msgs == 0 || ctx.Err() != nil {
			t.Fatalf("links stream holds %d messages, want 1: the one of the newer format, kept", info.State.Msgs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cons, err := a.links.Consumer(ctx, "part-"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	if ci, err := cons.Info(ctx); err != nil || ci.NumAckPending != 1 {
		t.Errorf("consumer: %+v, %v; want the newer message delivered and not acknowledged", ci, err)
	}
	if seen, _ := a.fr.Seen(newer.Key); seen {
		t.Error("a URL of an unknown format was admitted")
	}
	// A URL state of an unknown format: the rebuild refuses.
	q := (p + 1) % a.nparts
	var st frontier.Item
	for i := 0; ; i++ {
		if st = testItem(fmt.Sprintf("www.site%d.test", i), "/"); a.partitionOf(st.Host) == q {
			break
		}
	}
	b := encodeItem(toWire(st))
	b[0] = wireV1 + 1
	if _, err := a.js.Publish(ctx, a.names.urlState(q, st.Key), b); err != nil {
		t.Fatal(err)
	}
	if err := a.rebuild(ctx, q); !errors.Is(err, errNewerWire) {
		t.Errorf("rebuild over a state of an unknown format: %v, want errNewerWire", err)
	}
}

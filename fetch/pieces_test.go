package fetch

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestPieces: whatever the sizes written and the first piece's size, the collected bytes
// are the bytes written, the prefix is their start, and a body handed out is not reused
// by a later collection (its pooled pieces were copied out, not given away).
func TestPieces(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, tt := range []struct {
		name        string
		first, size int
	}{
		{"empty", firstPiece, 0},
		{"one piece", 100, 60},
		{"known length", 3 << 20, 3 << 20},
		{"grows past the largest piece", firstPiece, 5<<20 + 123},
		{"tiny first piece", 1, 70000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := make([]byte, tt.size)
			rng.Read(want)
			p := newPieces(int64(tt.first))
			for rest := want; len(rest) > 0; {
				n := min(len(rest), 1+rng.Intn(100000))
				if rng.Intn(2) == 0 {
					p.write(rest[:n])
				} else { // read into the spare room, as fill does
					n = copy(p.spare(), rest[:n])
					p.commit(n)
				}
				rest = rest[n:]
			}
			if p.n != int64(len(want)) {
				t.Fatalf("n = %d, want %d", p.n, len(want))
			}
			if got, w := p.prefix(sniffLen), want[:min(len(want), sniffLen)]; !bytes.Equal(got, w) {
				t.Fatalf("prefix: %d bytes differ from the first %d written", len(got), len(w))
			}
			got := p.bytes()
			if !bytes.Equal(got, want) {
				t.Fatalf("bytes: %d bytes, not the %d written", len(got), len(want))
			}
			if again := p.bytes(); len(again) != len(got) || (len(got) > 0 && &again[0] != &got[0]) {
				t.Fatal("a second call to bytes gave another slice")
			}
			q := newPieces(firstPiece) // reuses the pooled pieces p gave back
			q.write(bytes.Repeat([]byte{0xAA}, 3<<20))
			q.bytes()
			if !bytes.Equal(got, want) {
				t.Fatal("a later collection overwrote a body already handed out")
			}
		})
	}
}

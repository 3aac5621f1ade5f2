package index

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

// setFormatMark writes (or, with mark nil, deletes) the format mark of the closed index at
// dir, as an older or newer sonda would have left it.
func setFormatMark(t *testing.T, dir string, mark []byte) {
	t.Helper()
	bi, err := bleve.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mark == nil {
		err = bi.DeleteInternal(keyFormat)
	} else {
		err = bi.SetInternal(keyFormat, mark)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := bi.Close(); err != nil {
		t.Fatal(err)
	}
}

// formatMark reads the format mark of the closed index at dir.
func formatMark(t *testing.T, dir string) string {
	t.Helper()
	bi, err := bleve.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer bi.Close()
	v, err := bi.GetInternal(keyFormat)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// TestOpenChecksIndexFormat: an index records the format it was written in. Open reads an
// index of this sonda's format (or of none, written before formats were recorded) as it
// is; makes anew, for its owner to rebuild (Stats.Created), an index older than it reads;
// and refuses, without changing it, one written by a newer sonda or with a damaged mark,
// saying how to go on. A read-only Open changes nothing in any case.
func TestOpenChecksIndexFormat(t *testing.T) {
	current := strconv.Itoa(formatVersion)
	cases := []struct {
		name    string
		mark    []byte // the mark the index is left with; nil: none
		want    string // "kept", "remade" or "refused"
		wantErr string // in the error of a refusing Open
	}{
		{"this sonda's format", []byte(current), "kept", ""},
		{"no mark (before formats were recorded)", nil, "kept", ""},
		{"older than this sonda reads", []byte(strconv.Itoa(oldestFormat - 1)), "remade", "older sonda"},
		{"newer than this sonda reads", []byte(strconv.Itoa(formatVersion + 1)), "refused", "newer sonda"},
		{"damaged mark", []byte("x1"), "refused", "not a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			ix, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			load(t, ix, corpus[:3]...)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if got := formatMark(t, dir); got != current {
				t.Fatalf("a new index records format %q, want %q", got, current)
			}
			setFormatMark(t, dir, c.mark)

			// Read-only: the index as it is, or an error; never a change.
			ro, err := Open(dir, Options{ReadOnly: true})
			switch {
			case c.want == "kept" && err != nil:
				t.Fatalf("read-only Open: %v", err)
			case c.want == "kept":
				if n := ro.Stats().Documents; n != 3 {
					t.Errorf("read-only Open finds %d documents, want 3", n)
				}
				ro.Close()
			case !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), dir):
				t.Fatalf("read-only Open: error %v, want ErrFormat naming %s and %q", err, dir, c.wantErr)
			}
			if got := formatMark(t, dir); got != string(c.mark) {
				t.Fatalf("a read-only Open changed the format mark %q to %q", c.mark, got)
			}

			ix, err = Open(dir, Options{})
			if c.want == "refused" {
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "sonda ") {
					t.Fatalf("Open: error %v, want ErrFormat saying %q and which sonda command goes on", err, c.wantErr)
				}
				// Left as it was: with this sonda's mark back, the documents are all there.
				if got := formatMark(t, dir); got != string(c.mark) {
					t.Fatalf("a refusing Open changed the format mark %q to %q", c.mark, got)
				}
				setFormatMark(t, dir, []byte(current))
				if ix, err = Open(dir, Options{}); err != nil {
					t.Fatal(err)
				}
				defer ix.Close()
				if st := ix.Stats(); st.Documents != 3 || st.Created {
					t.Errorf("after a refusing Open: %d documents (Created %v), want the 3 written", st.Documents, st.Created)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			st := ix.Stats()
			if c.want == "kept" && (st.Created || st.Documents != 3) {
				t.Errorf("Open: Created %v with %d documents, want the index kept with its 3", st.Created, st.Documents)
			}
			if c.want == "remade" && (!st.Created || st.Documents != 0) {
				t.Errorf("Open: Created %v with %d documents, want it made anew, empty, for its owner to rebuild", st.Created, st.Documents)
			}
			load(t, ix, corpus[3])
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if got := formatMark(t, dir); got != current {
				t.Errorf("after a writable Open the index records format %q, want %q", got, current)
			}
		})
	}
}

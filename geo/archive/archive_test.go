package archive

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name string
	data []byte
}

func zipBytes(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func names(files []File) string {
	var n []string
	for _, f := range files {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

func TestExtract(t *testing.T) {
	inner := zipBytes(t, entry{"rios.shp", []byte("shp")}, entry{"deeper.zip", zipBytes(t, entry{"x.txt", []byte("x")})})
	data := zipBytes(t,
		entry{"dados/rios.shp", []byte("shp")},
		entry{"dados/rios.dbf", []byte("dbf")},
		entry{"../evil.txt", []byte("no")},
		entry{"/etc/passwd", []byte("no")},
		entry{`..\..\win.txt`, []byte("no")},
		entry{"C:/boot.ini", []byte("no")},
		entry{"__MACOSX/dados/._rios.shp", []byte("fork")},
		entry{"pacote.zip", inner},
	)
	dir := t.TempDir()
	files, skipped, err := Extract(writeTemp(t, data), dir, Limits{MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "dados/rios.shp,dados/rios.dbf,pacote.zip!/rios.shp"
	if got := names(files); got != want {
		t.Errorf("files %s, want %s", got, want)
	}
	if len(skipped) != 6 {
		t.Errorf("skipped %q", skipped)
	}
	for _, f := range files {
		rel, err := filepath.Rel(dir, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s written outside the directory: %s", f.Name, f.Path)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil.txt")); err == nil {
		t.Error("path traversal wrote a file")
	}
	// Depth 2 follows the second level too.
	files, _, err = Extract(writeTemp(t, data), t.TempDir(), Limits{MaxDepth: 2})
	if err != nil || !strings.Contains(names(files), "pacote.zip!/deeper.zip!/x.txt") {
		t.Errorf("depth 2: %s %v", names(files), err)
	}
}

func TestExtractLimits(t *testing.T) {
	zeros := make([]byte, 8<<20) // compresses about 1000:1
	bomb := zipBytes(t, entry{"zeros.bin", zeros})
	if _, _, err := Extract(writeTemp(t, bomb), t.TempDir(), Limits{}); !errors.Is(err, ErrBomb) {
		t.Errorf("ratio: %v", err)
	}
	if _, _, err := Extract(writeTemp(t, zipBytes(t, entry{"a", []byte("12345")}, entry{"b", []byte("12345")})), t.TempDir(), Limits{MaxTotal: 7}); !errors.Is(err, ErrBomb) {
		t.Errorf("total: %v", err)
	}
	many := make([]entry, 20)
	for i := range many {
		many[i] = entry{name: strings.Repeat("f", i+1), data: []byte("x")}
	}
	if _, _, err := Extract(writeTemp(t, zipBytes(t, many...)), t.TempDir(), Limits{MaxEntries: 10}); !errors.Is(err, ErrTooMany) {
		t.Errorf("entries: %v", err)
	}
	if _, _, err := Extract(writeTemp(t, []byte("not a zip")), t.TempDir(), Limits{}); !errors.Is(err, ErrNotZip) {
		t.Errorf("not zip: %v", err)
	}
	// A zip of a zip of a zip... is cut at MaxDepth, not followed.
	z := zipBytes(t, entry{"x.shp", []byte("x")})
	for i := 0; i < 5; i++ {
		z = zipBytes(t, entry{"n.zip", z})
	}
	files, skipped, err := Extract(writeTemp(t, z), t.TempDir(), Limits{})
	if err != nil || len(files) != 0 || len(skipped) != 1 {
		t.Errorf("nesting: files %v skipped %v err %v", files, skipped, err)
	}
}

func TestIsZip(t *testing.T) {
	if !IsZip(zipBytes(t, entry{"a", nil})) || IsZip([]byte("<html>")) {
		t.Error("IsZip")
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(zipBytes(f, entry{"a/b.shp", []byte("shp")}, entry{"../c", []byte("x")}))
	f.Add(zipBytes(f, entry{"n.zip", zipBytes(f, entry{"x", []byte("y")})}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		src := filepath.Join(dir, "in.zip")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		files, _, _ := Extract(src, out, Limits{MaxTotal: 16 << 20})
		for _, f := range files {
			rel, err := filepath.Rel(out, f.Path)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Fatalf("%q escaped to %s", f.Name, f.Path)
			}
		}
	})
}

package crawl

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProductionCodeDoesNotImportTestWeb: the crawler must not depend on its test fixture
// (issue 14 §6); the glue that points a crawl at a test web is testweb.Web.CrawlConfig.
func TestProductionCodeDoesNotImportTestWeb(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasSuffix(p, "/testweb") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

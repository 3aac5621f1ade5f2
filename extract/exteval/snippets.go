package exteval

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sonda-search/sonda/fetch"
)

// A third test set, held out from everything sonda was tuned on: the evaluation that
// trafilatura's authors built to tune trafilatura (BBAW's multilingual annotated pages,
// Polish and German news; ~980 pages, most of them not in English), as go-trafilatura
// ships it in its module: the pages under test-files/comparison and test-files/mock, and
// for each page a few strings its main text must contain ("with") and a few it must not
// ("without": navigation, footers, teasers) in scripts/comparison/data.go. It is
// read straight from the Go module cache; no copy is kept.
//
// Its metric is the one that evaluation uses: every "with" string found in the body is a
// true positive and every one missing a false negative; every "without" string found is a
// false positive. Precision, recall and F1 are pooled over all the strings of the set
// (not averaged over pages). The strings are compared with white space collapsed, since
// extractors join paragraphs differently. The set favours the baseline — go-trafilatura
// was tuned on it — which makes a gain there evidence, and a loss a place to look.

// TrafilaturaModule is the module whose benchmark the snippet set is.
const TrafilaturaModule = "github.com/markusmobius/go-trafilatura"

// Snippets is a snippet set's ground truth for one page.
type Snippets struct {
	With    []string `json:"with"`
	Without []string `json:"without"`
}

// SnippetCounts pools the strings of a snippet set.
type SnippetCounts struct {
	Found   int `json:"found"`   // "with" strings in the body (true positives)
	Missed  int `json:"missed"`  // "with" strings not in it (false negatives)
	Leaked  int `json:"leaked"`  // "without" strings in it (false positives)
	Avoided int `json:"avoided"` // "without" strings not in it (true negatives)
}

func (s *SnippetCounts) add(o SnippetCounts) {
	s.Found += o.Found
	s.Missed += o.Missed
	s.Leaked += o.Leaked
	s.Avoided += o.Avoided
}

// scores returns pooled precision and recall, ratio's rules for empty denominators.
func (s SnippetCounts) scores() (precision, recall float64) {
	return ratio(s.Found, s.Found+s.Leaked, s.Found+s.Missed == 0), ratio(s.Found, s.Found+s.Missed, s.Found+s.Leaked == 0)
}

// CountSnippets scores one extracted body against a page's snippets.
func CountSnippets(body string, want Snippets) SnippetCounts {
	got := collapseSpace(body)
	in := func(s string) bool {
		s = collapseSpace(s)
		return got != "" && s != "" && strings.Contains(got, s)
	}
	var c SnippetCounts
	for _, s := range want.With {
		if in(s) {
			c.Found++
		} else {
			c.Missed++
		}
	}
	for _, s := range want.Without {
		if in(s) {
			c.Leaked++
		} else {
			c.Avoided++
		}
	}
	return c
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// isSnippetSet says whether dir is laid out like go-trafilatura's module.
func isSnippetSet(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "scripts", "comparison", "data.go"))
	return err == nil && isDir(filepath.Join(dir, "test-files", "comparison"))
}

// loadSnippetSet reads the pages and strings of go-trafilatura's benchmark in dir (the
// module's root). The strings are a Go map literal; go/parser reads it as data (nothing
// of it runs). A page named in the data and missing from both page folders is an error:
// the set is incomplete.
func loadSnippetSet(dir string) ([]Case, error) {
	data := filepath.Join(dir, "scripts", "comparison", "data.go")
	f, err := parser.ParseFile(token.NewFileSet(), data, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("exteval: read %s: %w", data, err)
	}
	var cases []Case
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok || bad != nil {
			return bad == nil
		}
		page, ok := kv.Value.(*ast.CompositeLit)
		url, isString := stringLit(kv.Key)
		if !ok || !isString {
			return true
		}
		c := Case{URL: url, Snippets: &Snippets{}}
		for _, e := range page.Elts {
			field, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch name, _ := field.Key.(*ast.Ident); {
			case name == nil:
			case name.Name == "File":
				c.Name, _ = stringLit(field.Value)
			case name.Name == "With":
				c.Snippets.With = stringList(field.Value)
			case name.Name == "Without":
				c.Snippets.Without = stringList(field.Value)
			}
		}
		if c.Name == "" {
			bad = fmt.Errorf("exteval: %s: the entry for %s names no File", data, url)
			return false
		}
		for _, folder := range []string{"comparison", "mock"} {
			if c.Source, err = os.ReadFile(filepath.Join(dir, "test-files", folder, c.Name)); err == nil {
				break
			}
		}
		if err != nil {
			bad = fmt.Errorf("exteval: %s: page %s is in neither test-files/comparison nor test-files/mock", data, c.Name)
			return false
		}
		c.Source = fetch.ToUTF8(c.Source, "text/html")
		cases = append(cases, c)
		return false
	})
	if bad != nil {
		return nil, bad
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("exteval: no pages in %s (expected a map of URLs to entries with File, With and Without)", data)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func stringList(e ast.Expr) []string {
	list, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, x := range list.Elts {
		if s, ok := stringLit(x); ok {
			out = append(out, s)
		}
	}
	return out
}

// TrafilaturaBenchmark is where go-trafilatura's benchmark is: the module's folder in the
// Go module cache, at the version this program was built with (building sonda puts it
// there), or, for a program that does not record its dependencies (a test binary), the
// folder `go list -m` gives in the current module. It fails, saying how to get it, when
// the folder is not there.
func TrafilaturaBenchmark() (string, error) {
	dir, err := moduleCacheDir()
	if err != nil {
		return "", err
	}
	if !isSnippetSet(dir) {
		return "", fmt.Errorf("exteval: go-trafilatura's benchmark is not in %s: run `go mod download %s` in sonda's source folder (or set GOMODCACHE)", dir, TrafilaturaModule)
	}
	return dir, nil
}

func moduleCacheDir() (string, error) {
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == TrafilaturaModule {
				version = d.Version
				if d.Replace != nil {
					version = d.Replace.Version
				}
			}
		}
	}
	if version == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", TrafilaturaModule).Output()
		if dir := strings.TrimSpace(string(out)); err == nil && dir != "" {
			return dir, nil
		}
		return "", fmt.Errorf("exteval: this program does not say which %s it was built with, and `go list -m` here does not know it (%v): run it in sonda's source folder", TrafilaturaModule, err)
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("exteval: find the Go module cache: %w", err)
			}
			gopath = filepath.Join(home, "go")
		}
		cache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	// The module path has no upper-case letters, so its cache folder is the path itself.
	return filepath.Join(cache, filepath.FromSlash(TrafilaturaModule)+"@"+version), nil
}

package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestEveryNonConfigEnvIsKnown reads the repository's Go code and scripts for SONDA_
// variables that code reads with Getenv or scripts export, and checks that each is a
// setting or listed in knownNonConfigEnv. An unlisted one exported by scripts/test.sh made
// every sonda process the tests started refuse to run.
func TestEveryNonConfigEnvIsKnown(t *testing.T) {
	c := Default()
	fields := map[string]reflect.Value{}
	collectEnvFields(reflect.ValueOf(&c).Elem(), "SONDA", fields)
	read := regexp.MustCompile(`(?:Getenv|LookupEnv)\("(SONDA_[A-Z0-9_]+)"\)`)
	export := regexp.MustCompile(`export\s+(SONDA_[A-Z0-9_]+)=`)
	seen := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") && name != ".ci" || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		re := read
		switch {
		case strings.HasSuffix(path, ".go"):
		case strings.HasSuffix(path, ".sh") || filepath.Base(path) == "run":
			re = export
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			seen[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 5 {
		t.Fatalf("found only %d SONDA_ variables in the repository (%v): is the walk reading it?", len(seen), seen)
	}
	for name, path := range seen {
		if _, setting := fields[name]; !setting && !isNonConfigEnv(name) {
			t.Errorf("%s (read in %s) is neither a setting nor in knownNonConfigEnv: sonda refuses to start where it is set", name, path)
		}
	}
}

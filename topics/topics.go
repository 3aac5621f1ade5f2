// Package topics holds the example topics shipped with sonda, embedded in the binary so
// that `sonda crawl --topic nuclear` works without the source tree: nuclear (seed 001's
// vocabulary, in English and Portuguese) and geo (seed 000's geographic lexicon). The
// YAML files beside this one are the topics themselves, commented as a model for users'
// own topic files.
package topics

import (
	"embed"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in topics.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Read returns the YAML of a built-in topic.
func Read(name string) ([]byte, bool) {
	b, err := files.ReadFile(name + ".yaml")
	return b, err == nil
}

package testweb

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadCorpus reads the paragraphs of the .txt files in dir (real prose, such as the
// main texts of the Dragnet pages in the shared test data) for Config.Corpus: one
// paragraph per non-blank line of at least 80 bytes, files in name order.
func LoadCorpus(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var paras []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); len(line) >= 80 {
				paras = append(paras, line)
			}
		}
	}
	if len(paras) == 0 {
		return nil, fmt.Errorf("testweb: no paragraphs of prose in %s (want .txt files with lines of 80 bytes or more)", dir)
	}
	return paras, nil
}

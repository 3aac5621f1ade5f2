package revisit

import (
	"fmt"
	"os"
	"slices"

	"github.com/sonda-search/sonda/revisit/classify"
)

// ClassModel is a trained initial classifier (`sonda train revisit`): a classify model over
// page features that predicts a new page's change class.
type ClassModel struct {
	saved *classify.Saved
	cols  []int // indexes into Features.Vector of the model's features
}

// LoadClassModel reads a model file written by `sonda train revisit`.
func LoadClassModel(path string) (*ClassModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := classify.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &ClassModel{saved: s}
	for _, name := range s.Features {
		col := slices.Index(FeatureNames, name)
		if col < 0 {
			return nil, fmt.Errorf("%s: the model reads feature %q, which sonda does not compute (it has %v)", path, name, FeatureNames)
		}
		m.cols = append(m.cols, col)
	}
	return m, nil
}

// Classes is the number of classes the model predicts.
func (m *ClassModel) Classes() int { return len(m.saved.Classes) }

// Class implements InitialClassifier; a page without features goes to class 0.
func (m *ClassModel) Class(_ Key, o Observation) int {
	if o.Features == nil {
		return 0
	}
	v := o.Features.Vector()
	x := make([]float64, len(m.cols))
	for i, c := range m.cols {
		x[i] = v[c]
	}
	return m.saved.Predict(x)
}

package classify

import (
	"encoding/json"
	"fmt"
	"io"
)

// Saved is a trained model with what it needs to be used: the features it reads, in
// order, and the class names. It is the file `sonda train revisit` writes.
type Saved struct {
	Kind     string          `json:"kind"` // tree, bayes, knn, majority
	Features []string        `json:"features"`
	Classes  []string        `json:"classes"`
	Periods  []string        `json:"periods,omitempty"` // the classes' revisit periods (durations), when they are change classes
	Model    json.RawMessage `json:"model"`
	model    Model
}

// Predict runs the model.
func (s *Saved) Predict(x []float64) int { return s.model.Predict(x) }

// Save writes m as JSON.
func Save(w io.Writer, m Model, features, classes, periods []string) error {
	kind := ""
	switch m.(type) {
	case *TreeModel:
		kind = "tree"
	case *BayesModel:
		kind = "bayes"
	case *KNNModel:
		kind = "knn"
	case *ConstantModel:
		kind = "majority"
	default:
		return fmt.Errorf("classify: a %T cannot be saved", m)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("classify: encode model: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(Saved{Kind: kind, Features: features, Classes: classes, Periods: periods, Model: raw})
}

// Load reads a model written by Save and checks that it can be used.
func Load(r io.Reader) (*Saved, error) {
	var s Saved
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("classify: read model: %w", err)
	}
	if len(s.Classes) == 0 || len(s.Features) == 0 {
		return nil, fmt.Errorf("classify: the model names no classes or no features")
	}
	var m Model
	switch s.Kind {
	case "tree":
		t := &TreeModel{}
		if err := json.Unmarshal(s.Model, t); err != nil {
			return nil, fmt.Errorf("classify: tree: %w", err)
		}
		if err := checkNode(t.Root, len(s.Features), len(s.Classes), 0); err != nil {
			return nil, err
		}
		m = t
	case "bayes":
		b := &BayesModel{}
		if err := json.Unmarshal(s.Model, b); err != nil {
			return nil, fmt.Errorf("classify: naive Bayes: %w", err)
		}
		if len(b.LogPrior) != len(s.Classes) || len(b.Mean) != len(s.Classes) || len(b.Var) != len(s.Classes) {
			return nil, fmt.Errorf("classify: naive Bayes model has the wrong number of classes")
		}
		for c := range b.Mean {
			if len(b.Mean[c]) != len(s.Features) || len(b.Var[c]) != len(s.Features) {
				return nil, fmt.Errorf("classify: naive Bayes model has the wrong number of features")
			}
		}
		m = b
	case "knn":
		k := &KNNModel{}
		if err := json.Unmarshal(s.Model, k); err != nil {
			return nil, fmt.Errorf("classify: k-NN: %w", err)
		}
		if len(k.Min) != len(s.Features) || len(k.Range) != len(s.Features) || len(k.X) != len(k.Y) || k.NumY != len(s.Classes) || k.K < 1 {
			return nil, fmt.Errorf("classify: k-NN model is inconsistent")
		}
		for i, row := range k.X {
			if len(row) != len(s.Features) || k.Y[i] < 0 || k.Y[i] >= k.NumY {
				return nil, fmt.Errorf("classify: k-NN model row %d is inconsistent", i)
			}
		}
		m = k
	case "majority":
		c := &ConstantModel{}
		if err := json.Unmarshal(s.Model, c); err != nil || c.Class < 0 || c.Class >= len(s.Classes) {
			return nil, fmt.Errorf("classify: majority model is inconsistent")
		}
		m = c
	default:
		return nil, fmt.Errorf("classify: unknown model kind %q", s.Kind)
	}
	s.model = m
	return &s, nil
}

func checkNode(n *Node, features, classes, depth int) error {
	if n == nil || depth > 1000 {
		return fmt.Errorf("classify: tree model is malformed")
	}
	if n.Class < 0 || n.Class >= classes {
		return fmt.Errorf("classify: tree leaf names class %d of %d", n.Class, classes)
	}
	if n.Feature < 0 {
		return nil
	}
	if n.Feature >= features {
		return fmt.Errorf("classify: tree node tests feature %d of %d", n.Feature, features)
	}
	if err := checkNode(n.Left, features, classes, depth+1); err != nil {
		return err
	}
	return checkNode(n.Right, features, classes, depth+1)
}

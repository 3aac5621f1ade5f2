package index

import (
	"encoding/json"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// planSegment is a segment as scorch's merge planner sees it: its number and its
// documents, none deleted.
type planSegment struct{ id, docs int64 }

func (s *planSegment) Id() uint64          { return uint64(s.id) }
func (s *planSegment) FullSize() int64     { return s.docs }
func (s *planSegment) LiveSize() int64     { return s.docs }
func (s *planSegment) HasVector() bool     { return false }
func (s *planSegment) FileSize() int64     { return s.docs << 14 }
func (s *planSegment) LiveFileSize() int64 { return s.docs << 14 }

// scorchPlanOptions reads options the way scorch does (index/scorch/merge.go): Bleve's
// defaults, then the JSON of the configured map over them, then its validation.
func scorchPlanOptions(t *testing.T, configured map[string]any) mergeplan.MergePlanOptions {
	t.Helper()
	o := mergeplan.DefaultMergePlanOptions
	if configured != nil {
		b, err := json.Marshal(configured)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		if err := mergeplan.ValidateMergePlannerOptions(&o); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// replayPlans writes total documents in segments of batch, running the planner after
// each one and carrying out its merges at once, and returns how many times a document
// was rewritten by merges on average and the segments left.
func replayPlans(t *testing.T, o mergeplan.MergePlanOptions, total, batch int64) (rewrites float64, segments int) {
	t.Helper()
	var segs []mergeplan.Segment
	var id, rewritten int64
	for written := int64(0); written < total; written += batch {
		id++
		segs = append(segs, &planSegment{id, batch})
		plan, err := mergeplan.Plan(segs, &o)
		if err != nil {
			t.Fatal(err)
		}
		if plan == nil {
			continue
		}
		for _, task := range plan.Tasks {
			merged := map[uint64]bool{}
			var docs int64
			for _, s := range task.Segments {
				merged[s.Id()] = true
				docs += s.LiveSize()
			}
			kept := segs[:0]
			for _, s := range segs {
				if !merged[s.Id()] {
					kept = append(kept, s)
				}
			}
			id++
			segs = append(kept, &planSegment{id, docs})
			rewritten += docs
		}
	}
	return float64(rewritten) / float64(total), len(segs)
}

// TestMergePlanFloorAtBatchSize: with Bleve's floor (2,000 documents) every segment of a
// 256-document batch counts as 2,000, so the planner merges as soon as a small index has
// three segments and rewrites each document over and over; with the floor at the batch
// size a document is rewritten under once on the way to 20,000 documents, and the
// segments stay few.
func TestMergePlanFloorAtBatchSize(t *testing.T) {
	bleveRewrites, bleveSegments := replayPlans(t, scorchPlanOptions(t, nil), 20000, 256)
	rewrites, segments := replayPlans(t, scorchPlanOptions(t, mergePlan(256)), 20000, 256)
	t.Logf("20,000 documents in batches of 256: %.2f rewrites per document and %d segments with Bleve's floor, %.2f and %d with the floor at the batch size",
		bleveRewrites, bleveSegments, rewrites, segments)
	if bleveRewrites < 2 {
		t.Errorf("Bleve's own floor rewrote each document %.2f times: the premise of mergePlan (over 2) no longer holds", bleveRewrites)
	}
	if rewrites > 1 {
		t.Errorf("the floor at the batch size rewrote each document %.2f times, want at most 1", rewrites)
	}
	if segments > 20 {
		t.Errorf("%d segments left, want at most 20 (searches visit every one)", segments)
	}
	big, _ := replayPlans(t, scorchPlanOptions(t, mergePlan(256)), 200000, 256)
	if big > 2 {
		t.Errorf("200,000 documents: each rewritten %.2f times, want at most 2", big)
	}
}

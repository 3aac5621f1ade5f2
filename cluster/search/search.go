// Package search owns scatter-gather search over a sonda cluster. Every node answers
// searches over its own index on NATS request/reply (Serve), and a Gatherer asks every
// live node and merges their answers into the ranking that one index over all the pages
// would give: three phases, as Elasticsearch's dfs_query_then_fetch — the term statistics
// of every shard, then each shard's best hits scored with the whole collection's
// statistics, blended and merged at the gatherer, then the page's documents from the
// shards that hold them (index/shard.go has the ranking side and what is and is not
// equal to one index). With pseudo-relevance feedback on (the default ranking), three
// more come between the second and the third: the words of the best matches, the
// collection's counts of the likeliest of them, and their scores in the best matches
// (index/shardfeedback.go). A node that does not answer in time leaves a partial answer
// that names it; it is never an error.
//
// Subjects: sonda.<cluster>.search.<node>.stats, .query, .fbdocs, .fbcounts, .fbscores
// and .fetch.
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/index"
)

// DefaultCluster is the cluster name when none is given.
const DefaultCluster = "sonda"

// The phases, as the last token of a node's subjects.
const (
	phaseStats = "stats"
	phaseQuery = "query"
	phaseFetch = "fetch"
	// Pseudo-relevance feedback's phases (index.GatherFeedback).
	phaseFeedbackDocs   = "fbdocs"
	phaseTermCounts     = "fbcounts"
	phaseFeedbackScores = "fbscores"
)

// phases are every phase a node answers.
var phases = []string{phaseStats, phaseQuery, phaseFeedbackDocs, phaseTermCounts, phaseFeedbackScores, phaseFetch}

// Subject is the subject a node answers a search phase on.
func Subject(cluster, node, phase string) string {
	if cluster == "" {
		cluster = DefaultCluster
	}
	return "sonda." + cluster + ".search." + node + "." + phase
}

// checkToken reports whether s can be one token of a NATS subject.
func checkToken(what, s string) error {
	if s == "" {
		return fmt.Errorf("cluster search: the %s is empty", what)
	}
	if strings.ContainsAny(s, ".*> \t\r\n") {
		return fmt.Errorf("cluster search: %s %q has a character NATS subjects reserve (. * > or white space); use letters, digits, - and _", what, s)
	}
	return nil
}

// request is what the gatherer sends in every phase.
type request struct {
	Req index.ShardRequest `json:"req"`
	// Global are the collection's statistics (query and feedback scores phases).
	Global *index.CollectionStats `json:"global,omitempty"`
	IDs    []string               `json:"ids,omitempty"` // fetch and feedback documents and scores phases
	// Terms are the terms whose documents are counted (feedback counts phase).
	Terms []index.FieldTerm `json:"terms,omitempty"`
	// Expansion is the words feedback scores (feedback scores phase).
	Expansion *index.FeedbackExpansion `json:"expansion,omitempty"`
	// Budget is how long the gatherer waits: the node stops working on it after that.
	Budget time.Duration `json:"budget"`
}

// reply is a node's answer.
type reply struct {
	Error string `json:"error,omitempty"`
	// QueryError says Error is a malformed query, at byte QueryPos.
	QueryError bool `json:"query_error,omitempty"`
	QueryPos   int  `json:"query_pos,omitempty"`

	Stats *index.CollectionStats `json:"stats,omitempty"`
	Hits  *index.ShardHits       `json:"hits,omitempty"`
	Docs  []index.Hit            `json:"docs,omitempty"`

	FeedbackDocs []index.FeedbackDoc `json:"fb_docs,omitempty"`
	Counts       []uint64            `json:"counts,omitempty"`
	Scores       []float64           `json:"scores,omitempty"`
}

// Server answers the search phases for one node's index.
type Server struct {
	ix   *index.Index
	subs []*nats.Subscription
	sem  chan struct{}

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// Listen starts answering searches over ix as node nodeID of cluster ("": DefaultCluster)
// and returns once the NATS server has the subscriptions. Close stops it.
func Listen(nc *nats.Conn, cluster, nodeID string, ix *index.Index) (*Server, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	if err := checkToken("cluster name", cluster); err != nil {
		return nil, err
	}
	if err := checkToken("node ID", nodeID); err != nil {
		return nil, err
	}
	s := &Server{ix: ix, sem: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, phase := range phases {
		sub, err := nc.Subscribe(Subject(cluster, nodeID, phase), s.handler(phase))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("cluster search: subscribe to %s: %w", Subject(cluster, nodeID, phase), err)
		}
		s.subs = append(s.subs, sub)
	}
	ping, err := nc.Subscribe(pingSubject(cluster), func(m *nats.Msg) { _ = m.Respond([]byte(nodeID)) })
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cluster search: subscribe to %s: %w", pingSubject(cluster), err)
	}
	s.subs = append(s.subs, ping)
	if err := nc.Flush(); err != nil {
		s.Close()
		return nil, fmt.Errorf("cluster search: NATS: %w", err)
	}
	return s, nil
}

// Serve answers searches over ix as node nodeID of cluster until ctx ends.
func Serve(ctx context.Context, nc *nats.Conn, cluster, nodeID string, ix *index.Index) error {
	s, err := Listen(nc, cluster, nodeID, ix)
	if err != nil {
		return err
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// Close stops answering and waits for the searches under way.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.cancel()
	s.wg.Wait()
}

// handler answers one phase. NATS calls a subscription's handler for one message at a
// time; searches run beside each other, at most sem of them.
func (s *Server) handler(phase string) nats.MsgHandler {
	return func(m *nats.Msg) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			var rep reply
			var req request
			if err := json.Unmarshal(m.Data, &req); err != nil {
				rep = reply{Error: fmt.Sprintf("malformed %s request: %v", phase, err)}
			} else {
				// The gatherer waits Budget: a search still queued after that is dropped.
				ctx := s.ctx
				if req.Budget > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, req.Budget)
					defer cancel()
				}
				select {
				case s.sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				rep = s.answer(ctx, phase, req)
				<-s.sem
			}
			b, err := json.Marshal(rep)
			if err != nil {
				b, _ = json.Marshal(reply{Error: "encode the answer: " + err.Error()})
			}
			_ = m.Respond(b) // the gatherer may have gone: nothing to do
		}()
	}
}

func (s *Server) answer(ctx context.Context, phase string, req request) reply {
	var rep reply
	var err error
	switch phase {
	case phaseStats:
		rep.Stats, err = s.ix.ShardStats(ctx, req.Req)
	case phaseQuery:
		if req.Global == nil {
			return reply{Error: "query phase without the collection's statistics"}
		}
		rep.Hits, err = s.ix.ShardSearch(ctx, req.Req, req.Global)
	case phaseFetch:
		rep.Docs, err = s.ix.ShardFetch(ctx, req.Req, req.IDs)
	case phaseFeedbackDocs:
		rep.FeedbackDocs, err = s.ix.ShardFeedbackDocs(ctx, req.IDs)
	case phaseTermCounts:
		rep.Counts, err = s.ix.ShardTermCounts(ctx, req.Terms)
	case phaseFeedbackScores:
		if req.Global == nil || req.Expansion == nil {
			return reply{Error: "feedback scores phase without the collection's statistics or the expansion"}
		}
		rep.Scores, err = s.ix.ShardFeedbackScores(ctx, req.Req, req.Global, req.Expansion, req.IDs)
	}
	if err != nil {
		rep = reply{Error: err.Error()}
		var qe *index.QueryError
		if errors.As(err, &qe) {
			rep.Error, rep.QueryError, rep.QueryPos = qe.Msg, true, qe.Pos
		}
	}
	return rep
}

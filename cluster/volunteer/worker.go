package volunteer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/fetch"
)

// WorkerOptions configure a volunteer worker.
type WorkerOptions struct {
	// Fetch are the fetcher's options (timeouts, limits, which addresses it may reach);
	// the user agent is the one each task names (the crawl's), else Fetch.UserAgent.
	Fetch fetch.Options
	// Concurrency is how many tasks run at once (default 4).
	Concurrency int
	// Mutate, when set, changes each result before it is sent. Tests use it to play a
	// worker that lies; a real worker leaves it nil.
	Mutate func(*Task, *Result)
	Logger *slog.Logger
}

// Identity is what a worker's credential says it may do: its name and subjects.
type Identity struct {
	Cluster, Name string
	task, out     string // subscribe; publish prefix (ends with ".")
}

// ReadIdentity reads a worker's credentials file (`sonda cluster workers add`) for the
// subjects it was granted.
func ReadIdentity(credsFile string) (Identity, error) {
	b, err := os.ReadFile(credsFile)
	if err != nil {
		return Identity{}, err
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return Identity{}, fmt.Errorf("worker credentials %s: %w", credsFile, err)
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return Identity{}, fmt.Errorf("worker credentials %s: %w", credsFile, err)
	}
	bad := fmt.Errorf("worker credentials %s: not a worker's credential (issue one with `sonda cluster workers add NAME`)", credsFile)
	if len(uc.Permissions.Sub.Allow) != 1 || len(uc.Permissions.Pub.Allow) != 1 {
		return Identity{}, bad
	}
	id := Identity{task: uc.Permissions.Sub.Allow[0], out: strings.TrimSuffix(uc.Permissions.Pub.Allow[0], ">")}
	parts := strings.Split(id.task, ".")
	if len(parts) != 5 || parts[0] != "sonda" || parts[2] != "worker" || parts[4] != "task" || id.out != "sonda."+parts[1]+".worker."+parts[3]+".out." {
		return Identity{}, bad
	}
	id.Cluster, id.Name = parts[1], parts[3]
	return id, nil
}

// Worker fetches what it is given and returns it. It keeps no state beyond its tasks in
// progress.
type Worker struct {
	id   Identity
	nc   *nats.Conn
	o    WorkerOptions
	log  *slog.Logger
	free chan struct{}

	mu       sync.Mutex
	fetchers map[string]*fetch.Fetcher // by user agent

	done sync.WaitGroup
}

// NewWorker prepares a worker on connection nc (made with the worker's credentials).
func NewWorker(nc *nats.Conn, id Identity, o WorkerOptions) *Worker {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{id: id, nc: nc, o: o, log: o.Logger, free: make(chan struct{}, o.Concurrency), fetchers: map[string]*fetch.Fetcher{}}
	for range o.Concurrency {
		w.free <- struct{}{}
	}
	return w
}

// Run takes tasks until ctx ends, announcing itself every second.
func (w *Worker) Run(ctx context.Context) error {
	tasks := make(chan *nats.Msg, 4*w.o.Concurrency)
	sub, err := w.nc.ChanSubscribe(w.id.task, tasks)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := w.nc.Flush(); err != nil {
		return fmt.Errorf("worker %s: %w", w.id.Name, err)
	}
	w.hello()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	defer w.done.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			w.hello()
		case m := <-tasks:
			var t Task
			if err := json.Unmarshal(m.Data, &t); err != nil {
				w.log.Warn("malformed task", "error", err)
				continue
			}
			select {
			case <-w.free:
			case <-ctx.Done():
				return nil
			}
			w.done.Add(1)
			go func() {
				defer w.done.Done()
				defer func() { w.free <- struct{}{} }()
				w.run(ctx, &t)
			}()
		}
	}
}

func (w *Worker) hello() {
	b, _ := json.Marshal(Hello{Concurrency: w.o.Concurrency, Free: len(w.free)})
	_ = w.nc.Publish(w.id.out+"hello", b)
}

// run fetches one task and sends its result; a task past its deadline is dropped unseen
// (the node has given it to someone else, and the host must not get a second request).
func (w *Worker) run(ctx context.Context, t *Task) {
	if !time.Now().Before(t.Deadline) {
		return
	}
	f, err := w.fetcher(t.UserAgent)
	if err != nil {
		w.log.Error("fetcher", "error", err)
		return
	}
	fctx, cancel := context.WithDeadline(ctx, t.Deadline)
	res := f.Fetch(fctx, fetch.Request{URL: t.URL, ETag: t.ETag, LastModified: t.LastModified, MaxBodyBytes: t.MaxBody})
	cancel()
	if ctx.Err() != nil {
		return
	}
	r := resultOf(t, res)
	if w.o.Mutate != nil {
		w.o.Mutate(t, r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	if err := w.nc.Publish(w.id.out+"res."+t.Node, b); err != nil {
		w.log.Warn("cannot send a result", "url", t.URL, "error", err)
	}
}

// resultOf packs a fetch for the node, with the worker's digest of the page.
func resultOf(t *Task, res *fetch.Result) *Result {
	r := &Result{ID: t.ID, Token: t.Token, Status: res.Status, Header: res.Header, Wire: res.Wire,
		RawRequest: res.RawRequest, RawResponseHeader: res.RawResponseHeader, Location: res.Location,
		Truncated: res.Truncated, Skipped: res.Skipped, StartedAt: res.StartedAt, Millis: res.Timing.Total.Milliseconds(),
		Digest: digestOf(res).Digest}
	if res.Err != nil {
		r.ErrKind, r.Err = string(fetch.KindOf(res.Err)), res.Err.Error()
	}
	return r
}

// Rewrite replaces a result's body with body (uncompressed) and recomputes its digest, as
// a worker that lies consistently would: tests use it to play such a worker.
func Rewrite(r *Result, url string, body []byte) {
	r.Header = r.Header.Clone()
	r.Header.Del("Content-Encoding")
	r.Header.Del("Content-Length")
	r.Wire = body
	res := fetch.Decode(r.Header, body, 0)
	res.URL, res.FinalURL, res.Status = url, url, r.Status
	r.Digest = digestOf(res).Digest
}

// Decoded rebuilds the response of a result as the node's fetcher would have made it.
func (r *Result) decoded(url string, maxBody int64) *fetch.Result {
	header := r.Header
	if header == nil {
		header = map[string][]string{}
	}
	res := fetch.Decode(header, r.Wire, maxBody)
	res.URL, res.FinalURL, res.Status, res.Location = url, url, r.Status, r.Location
	res.RawRequest, res.RawResponseHeader = r.RawRequest, r.RawResponseHeader
	res.StartedAt, res.Timing.Total = r.StartedAt, time.Duration(r.Millis)*time.Millisecond
	if r.Truncated != "" {
		res.Truncated = r.Truncated
	}
	res.Skipped = r.Skipped
	if r.Status == 429 || r.Status == 503 {
		res.RetryAfter = fetch.ParseRetryAfter(header.Get("Retry-After"), time.Now())
	}
	if r.ErrKind != "" {
		res.Err = &fetch.Error{Kind: fetch.ErrorKind(r.ErrKind), URL: url, Err: errors.New(r.Err)}
	}
	return res
}

func (w *Worker) fetcher(ua string) (*fetch.Fetcher, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ua == "" {
		ua = w.o.Fetch.UserAgent
	}
	if f := w.fetchers[ua]; f != nil {
		return f, nil
	}
	if len(w.fetchers) >= 8 { // nodes with many agents: keep the memory bounded
		for k, f := range w.fetchers {
			f.Close()
			delete(w.fetchers, k)
		}
	}
	o := w.o.Fetch
	o.UserAgent = ua
	f, err := fetch.New(o)
	if err != nil {
		return nil, err
	}
	w.fetchers[ua] = f
	return f, nil
}

// Close releases the worker's fetchers.
func (w *Worker) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, f := range w.fetchers {
		f.Close()
		delete(w.fetchers, k)
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/web"
	"github.com/sonda-search/sonda/web/local"
)

// demoServe opens the demo's data directory and, unless noServe, serves the web UI on
// addr (or a free port when addr is taken) while the demo crawls. serving waits until the
// server stops (Ctrl-C); with noServe it returns at once.
func demoServe(ctx context.Context, cfg config.Config, noServe bool, addr string, out, progress io.Writer) (d *local.Data, serving func() error, err error) {
	d, err = openData(cfg, progressPrinter(progress))
	if err != nil {
		return nil, nil, err
	}
	if noServe {
		return d, func() error { return nil }, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			d.Close()
			return nil, nil, fmt.Errorf("demo: cannot listen for the web UI: %w", err)
		}
		fmt.Fprintf(out, "%s is taken; serving on a free port instead\n", addr)
	}
	done := make(chan error, 1)
	go func() { done <- serveData(ctx, d, cfg, ln, out) }()
	return d, func() error {
		if ctx.Err() != nil { // interrupted while crawling: the server is shutting down
			return <-done
		}
		fmt.Fprintf(out, "\nexplore the crawl at http://%s/ (search, relations, dashboard); Ctrl-C stops the server\n", ln.Addr())
		return <-done
	}, nil
}

// demoCrawl runs the demo's crawl through the server's crawl control, so the dashboard
// shows it live.
func demoCrawl(ctx context.Context, d *local.Data, w io.Writer) (crawl.Summary, error) {
	if err := d.Runner.Start(ctx, web.CrawlRequest{}); err != nil {
		return crawl.Summary{}, err
	}
	sum, err := d.Runner.Wait(ctx)
	if ctx.Err() != nil { // Ctrl-C while crawling: stop cleanly, then report what was done
		d.Runner.Close()
		sum, err = d.Runner.Wait(context.Background())
		fmt.Fprintln(w, "stopped")
	}
	if err != nil || sum == nil {
		return crawl.Summary{}, fmt.Errorf("demo crawl: %w", err)
	}
	return *sum, nil
}

// Command sonda is a vertical web search engine: it crawls the part of the web that
// matters to one domain, keeps it fresh, extracts structured records and serves search.
//
// Run `sonda --help` for the commands; `sonda demo` shows the whole thing offline.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// exitUsage is the exit status for bad invocations and bad input; 1 is for failures.
const exitUsage = 2

// usageError marks errors caused by how sonda was invoked.
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks for a clean stop (a crawl lets fetches in flight finish); a
	// second one gets the default action and ends the process at once, which loses
	// nothing recorded: the crawl state and the WARC files recover from a hard stop.
	context.AfterFunc(ctx, stop)
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return
	}
	var se silentExit
	if errors.As(err, &se) {
		os.Exit(se.code)
	}
	fmt.Fprintln(os.Stderr, "sonda:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(exitUsage)
	}
	os.Exit(1)
}

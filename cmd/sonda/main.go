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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// exitUsage is the exit status for bad invocations and bad input; 1 is for failures.
const exitUsage = 2

// exitSignal is the exit status of a command a signal stopped before it finished
// (128 + SIGTERM, as a shell reports it).
const exitSignal = 128 + int(syscall.SIGTERM)

// A command annotated annotStop: stopAtOnce only reads, and a signal ends it after at
// most lookStopGrace even if it does not notice its context ending.
const (
	annotStop     = "sonda-stop"
	stopAtOnce    = "at-once"
	lookStopGrace = time.Second
)

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
	var running atomic.Pointer[cobra.Command]
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { running.Store(cmd) }
	context.AfterFunc(ctx, func() {
		cmd := running.Load()
		// Commands that only look have nothing to finish: however they are blocked (a
		// file that never answers, a disk that stalls), a signal ends them within
		// lookStopGrace. Those that write (crawl, serve, repair) stop cleanly themselves.
		if cmd == nil || cmd.Annotations[annotStop] != stopAtOnce {
			return
		}
		time.AfterFunc(lookStopGrace, func() {
			fmt.Fprintf(os.Stderr, "sonda: stopped by a signal while %s was still reading (it changes nothing, so nothing is lost)\n", cmd.Name())
			os.Exit(exitSignal)
		})
	})
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

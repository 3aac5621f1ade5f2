// Package crashpoint ends the process with SIGKILL at a named point of a write path when
// its environment asks for it. Crash tests use it to kill a real sonda process at exactly
// the moments that matter (between a WARC record and the database batch that points at
// it, halfway through a write, between two renames) instead of at random times, which
// hit the narrow windows almost never.
//
//	SONDA_CRASH_AT=NAME[:N]   kill the process the N-th time (default 1) it reaches NAME
//	SONDA_CRASH_TRACE=FILE    append the name of every point reached to FILE, a line each
//
// With neither set, which is always the case outside those tests, a point costs one
// atomic load. The variables are read once, when the process starts.
package crashpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables (config knows them as variables that are not settings).
const (
	EnvAt    = "SONDA_CRASH_AT"
	EnvTrace = "SONDA_CRASH_TRACE"
)

var (
	enabled atomic.Bool
	target  string
	nth     int64
	hits    atomic.Int64 // hits of target so far

	traceMu sync.Mutex
	trace   *os.File
)

func init() {
	at, tr := os.Getenv(EnvAt), os.Getenv(EnvTrace)
	if at == "" && tr == "" {
		return
	}
	if at != "" {
		name, n, found := strings.Cut(at, ":")
		target, nth = name, 1
		if found {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v < 1 {
				fmt.Fprintf(os.Stderr, "%s=%q: the count after the colon must be a positive integer\n", EnvAt, at)
				os.Exit(2)
			}
			nth = v
		}
	}
	if tr != "" {
		f, err := os.OpenFile(tr, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", EnvTrace, err)
			os.Exit(2)
		}
		trace = f
	}
	enabled.Store(true)
}

// Enabled reports whether a crash test set this process up; callers use it to install
// costlier instrumentation (a file-system wrapper) only then.
func Enabled() bool { return enabled.Load() }

// Armed reports whether this arrival at point name is the one to crash at. A caller that
// gets true does what a crash there would leave half done (writes part of a buffer), then
// calls Kill. Every arrival is traced.
func Armed(name string) bool {
	if !enabled.Load() {
		return false
	}
	if trace != nil {
		traceMu.Lock()
		trace.WriteString(name + "\n") // O_APPEND: one write a line, in the page cache at once
		traceMu.Unlock()
	}
	return name == target && hits.Add(1) == nth
}

// Here kills the process if this arrival at point name is the one to crash at.
func Here(name string) {
	if Armed(name) {
		Kill()
	}
}

// Kill ends the process at once with SIGKILL, as a kill -9 or a power-less crash would
// (no deferred call, no buffer flushed). It does not return.
func Kill() {
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		p.Kill()
	}
	for { // the signal is on its way
		time.Sleep(time.Hour)
	}
}

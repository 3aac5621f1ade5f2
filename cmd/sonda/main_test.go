package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sondaBin is the sonda binary built once for the tests that need a real process
// (kill -9, exit codes, signals).
var sondaBin string

func TestMain(m *testing.M) {
	if os.Getenv(volunteerHelperEnv) != "" {
		os.Exit(volunteerHelper()) // this process plays a volunteer worker (volunteer_test.go)
	}
	dir, err := os.MkdirTemp("", "sonda-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sondaBin = filepath.Join(dir, "sonda")
	build := exec.Command("go", "build", "-o", sondaBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sonda for the tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run executes the sonda binary and returns its stdout, stderr and exit code.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(sondaBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run sonda %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

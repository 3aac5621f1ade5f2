package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLookingCommandsAnswerSIGTERM: a command that only reads ends within seconds of
// SIGTERM however it is blocked. Here status.json is a named pipe nobody writes, so
// `sonda status` blocks opening it (as a read from a stalled disk would); before, it
// waited for ever and only a second signal ended it.
func TestLookingCommandsAnswerSIGTERM(t *testing.T) {
	data := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(data, "status.json"), 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	cmd := exec.Command(sondaBin, "status", "--data", data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Signal once the process is blocked in the pipe's open: its stack in /proc says so.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if blockedOnPipe(cmd.Process.Pid) || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("status ended before it blocked: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		took := time.Since(sent)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitSignal || !strings.Contains(stderr.String(), "stopped by a signal") {
			t.Errorf("status after SIGTERM: %v, stderr %q; want exit %d saying it was stopped", err, stderr.String(), exitSignal)
		}
		t.Logf("status ended %s after SIGTERM", took.Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("status still running 15 s after SIGTERM")
	}
}

// blockedOnPipe reports whether a thread of process pid waits in the kernel on a pipe
// (wait_for_partner: opening a named pipe nobody has opened for writing).
func blockedOnPipe(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, w := range tasks {
		b, _ := os.ReadFile(w)
		if strings.Contains(string(b), "wait_for_partner") || strings.Contains(string(b), "pipe") {
			return true
		}
	}
	return false
}

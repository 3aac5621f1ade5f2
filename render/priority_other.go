//go:build !linux

package render

import (
	"log/slog"
	"os/exec"
)

// lowerPriority is Linux only (see priority_linux.go): elsewhere the browser runs at
// sonda's CPU priority.
func lowerPriority(nice int, log *slog.Logger) func(*exec.Cmd) { return nil }

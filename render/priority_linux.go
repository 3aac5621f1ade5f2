package render

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// lowerPriority returns the change to the browser's command that starts it nice steps
// below sonda's CPU priority (Options.Nice), or nil when nice ≤ 0.
//
// nice(1) alone is not enough when sonda runs with CAP_SYS_NICE (as root, in most
// containers): Chromium sets its own threads' priorities, raising them back to nice 0 and
// its compositor and I/O threads to -8, above the crawler's. So the browser is also
// started without CAP_SYS_NICE (setpriv(1) drops it from the bounding and inheritable
// sets before the exec): it may still lower its priority, never raise it.
func lowerPriority(nice int, log *slog.Logger) func(*exec.Cmd) {
	if nice <= 0 {
		return nil
	}
	niceBin, err := exec.LookPath("nice")
	if err != nil {
		log.Warn("render: nice(1) not found; the browser runs at sonda's CPU priority", "error", err)
		return nil
	}
	var setpriv string
	if hasCapSysNice() {
		if setpriv, err = exec.LookPath("setpriv"); err != nil {
			log.Warn("render: setpriv(1) (util-linux) not found; with CAP_SYS_NICE the browser raises its own priority back", "error", err)
			return nil
		}
	}
	return func(cmd *exec.Cmd) {
		// What chromedp does without this hook: the browser dies with the thread that
		// started it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		args := []string{niceBin, "-n", strconv.Itoa(nice)}
		if setpriv != "" {
			args = append(args, setpriv, "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice", "--")
		}
		cmd.Args = append(args, append([]string{cmd.Path}, cmd.Args[1:]...)...)
		cmd.Path = niceBin
	}
}

// capSysNice is CAP_SYS_NICE's bit in the capability sets of /proc/self/status.
const capSysNice = 23

// hasCapSysNice says whether this process may raise priorities (and so may a browser it
// starts).
func hasCapSysNice() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("CapEff:")); ok {
			caps, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			return err != nil || caps&(1<<capSysNice) != 0
		}
	}
	return os.Geteuid() == 0
}

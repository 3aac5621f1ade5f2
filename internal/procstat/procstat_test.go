package procstat

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRSSGrowsWithTouchedMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before := RSS()
	if before <= 0 || PeakRSS() < before {
		t.Fatalf("RSS %d, peak %d", before, PeakRSS())
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	if after := RSS(); after < before+32<<20 {
		t.Fatalf("RSS went from %d to %d after touching 64 MiB", before, after)
	}
	runtime.KeepAlive(buf)
}
func TestRSSOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if r := RSSOf(os.Getpid()); r <= 0 || r > 2*PeakRSS() {
		t.Fatalf("RSSOf(self) = %d, peak %d", r, PeakRSS())
	}
	if RSSOf(-1) != 0 {
		t.Fatal("RSSOf of no process is not 0")
	}
}

func TestCPUOfCountsSpinning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before := CPUOf(os.Getpid())
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	// Spin until the kernel has charged this process 200 ms more CPU (however busy the
	// machine, that much CPU is eventually given), then compare with getrusage's count.
	deadline := time.Now().Add(time.Minute)
	x := 0
	for CPUOf(os.Getpid())-before < 200*time.Millisecond {
		for i := range 1 << 20 {
			x += i
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPUOf did not grow by 200 ms in a minute of spinning: %s → %s", before, CPUOf(os.Getpid()))
		}
	}
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	used := func(ru syscall.Rusage) time.Duration {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	got, want := CPUOf(os.Getpid())-before, used(ru1)-used(ru0)
	if got < want-50*time.Millisecond || got > want+50*time.Millisecond {
		t.Errorf("CPUOf grew by %s while getrusage counted %s (x %d)", got, want, x)
	}
	if CPUOf(-1) != 0 {
		t.Error("CPUOf of no process is not 0")
	}
}

func TestMachineCPUAndLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	busy, total := MachineCPU()
	if busy <= 0 || total < busy {
		t.Fatalf("MachineCPU = %s busy of %s", busy, total)
	}
	if f := strings.Fields(LoadAverage()); len(f) != 3 {
		t.Fatalf("LoadAverage = %q, want three figures", LoadAverage())
	}
}

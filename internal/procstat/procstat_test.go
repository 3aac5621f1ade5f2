package procstat

import (
	"os"
	"runtime"
	"testing"
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

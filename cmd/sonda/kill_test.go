package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/testweb"
)

// TestKill9Resume kills a real crawl process with SIGKILL at random moments and resumes it
// on the same data directory until it finishes. Nothing may be lost (every reachable page
// is fetched) and the only pages fetched twice are ones that were in flight at a kill: at
// most concurrency per kill.
func TestKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real crawl processes")
	}
	for round := 0; round < 2; round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) { killResumeRound(t, uint64(round)) })
	}
}

func killResumeRound(t *testing.T, seed uint64) {
	web := testweb.New(testweb.Config{Seed: int64(100 + seed), Hosts: 50, Disable: testweb.Slow, TrapLimit: 100, Retries: config.Default().Politeness.MaxRetries})
	addr, err := web.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()

	const concurrency = 8
	data := t.TempDir()
	args := []string{"crawl", "--data", data, "--allow-private", "--resolve", "*.test=" + addr,
		"--min-delay", "5ms", "--concurrency", strconv.Itoa(concurrency)}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	env := append(os.Environ(),
		"SONDA_SCOPE_FOLLOW=any", "SONDA_SCOPE_MAX_QUERY_VARIANTS=100",
		"SONDA_POLITENESS_RETRY_DELAY=50ms", "SONDA_ROBOTS_RETRY_DELAY=50ms", "SONDA_ROBOTS_MAX_FAILURES=2",
		"SONDA_FETCH_FIRST_BYTE_TIMEOUT=5s", "SONDA_LOG_LEVEL=warn")

	rng := rand.New(rand.NewPCG(seed, 42))
	kills := 0
	for attempt := 0; ; attempt++ {
		if attempt > 60 {
			t.Fatal("the crawl did not finish after 60 restarts")
		}
		cmd := exec.Command(sondaBin, args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		wait := time.Duration(150+rng.IntN(450)) * time.Millisecond
		if kills >= killLimit {
			wait = time.Minute // enough: let it finish
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("crawl failed: %v\n%s", err, stderr.String())
			}
			checkAfterKills(t, web, kills, concurrency)
			return
		case <-time.After(wait):
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			kills++
		}
	}
}

var killLimit = 6

var (
	timesRe = regexp.MustCompile(`requested (\d+) times, want (\d+)`)
	trapRe  = regexp.MustCompile(`trap URL requested (\d+) times`)
)

func checkAfterKills(t *testing.T, web *testweb.Web, kills, concurrency int) {
	t.Helper()
	extra := 0
	for _, p := range web.CheckFetches() {
		if m := trapRe.FindStringSubmatch(p); m != nil { // a trap page that was in flight
			n, _ := strconv.Atoi(m[1])
			extra += n - 1
			continue
		}
		m := timesRe.FindStringSubmatch(p)
		if m == nil {
			t.Errorf("after %d kills: %s", kills, p)
			continue
		}
		got, _ := strconv.Atoi(m[1])
		want, _ := strconv.Atoi(m[2])
		if got < want {
			t.Errorf("after %d kills: %s (a URL was lost)", kills, p)
			continue
		}
		extra += got - want
	}
	if extra > kills*concurrency {
		t.Errorf("%d extra fetches after %d kills: more than the %d pages that can be in flight", extra, kills, kills*concurrency)
	}
	t.Logf("%d kills, %d pages refetched (at most %d were in flight)", kills, extra, kills*concurrency)
}

// TestKill9WhileStarting kills crawls in their first moments, while the data directory's
// store and search index are being created, at points spread over the start-up, then lets
// one finish. A kill while the index was being created used to leave a directory every
// later crawl refused ("error parsing mapping JSON"); now each start must resume.
func TestKill9WhileStarting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real crawl processes")
	}
	web := testweb.New(testweb.Config{Seed: 7, Hosts: 4, PagesPerHost: 8, Disable: testweb.AllFeatures &^ testweb.Robots})
	addr, err := web.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	const concurrency = 4
	args := []string{"crawl", "--data", t.TempDir(), "--allow-private", "--resolve", "*.test=" + addr,
		"--min-delay", "0s", "--concurrency", strconv.Itoa(concurrency)}
	for _, s := range web.Seeds() {
		args = append(args, "--seed", s)
	}
	env := append(os.Environ(), "SONDA_SCOPE_FOLLOW=any", "SONDA_LOG_LEVEL=warn")
	const kills = 10
	for i := 0; ; i++ {
		cmd := exec.Command(sondaBin, args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i == kills {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the crawl after %d kills at start-up failed: %v\n%s", kills, err, stderr.String())
			}
			break
		}
		// From the process's first instructions to well into its first fetches.
		time.Sleep(time.Duration(i*i) * time.Millisecond * 3)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
			t.Fatalf("start %d ended before the kill: %v\n%s", i, err, stderr.String())
		}
	}
	checkAfterKills(t, web, kills, concurrency)
}

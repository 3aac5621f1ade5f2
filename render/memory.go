package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// treeRSS is the memory, in bytes, of process pid and all its descendants (Chromium runs
// renderers, a GPU and a network process as children), read from /proc: their
// proportional set size, which shares pages among the processes mapping them (summing
// resident sizes would count the browser's shared libraries once per process, several
// hundred MiB too many), or the resident size where the kernel gives no PSS. It is 0
// where /proc is missing, which turns the memory bound off.
func treeRSS(pid int) int64 {
	page := int64(os.Getpagesize())
	var total int64
	for _, p := range processTree(pid) {
		total += processMemory(p, page)
	}
	return total
}

// processTree is pid and all its descendants, from /proc (nil where it is missing).
func processTree(pid int) []int {
	if pid <= 0 {
		return nil
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := statFields(b)
		if len(fields) < 2 {
			continue
		}
		ppid, err1 := strconv.Atoi(string(fields[1]))
		p, err2 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var tree []int
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		tree = append(tree, p)
	}
	return tree
}

// statFields are the fields of a /proc stat file after the command name: state, ppid, ...
// The name, in parentheses, may hold spaces and parentheses, so they start after the last ')'.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// processMemory is one process's PSS from smaps_rollup, else its RSS from statm.
func processMemory(pid int, page int64) int64 {
	dir := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(dir + "/smaps_rollup"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
				f := bytes.Fields(rest) // "1234 kB"
				if len(f) >= 1 {
					if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						return kb << 10
					}
				}
			}
		}
	}
	b, err := os.ReadFile(dir + "/statm")
	if err != nil {
		return 0
	}
	if f := bytes.Fields(b); len(f) >= 2 {
		if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			return n * page
		}
	}
	return 0
}

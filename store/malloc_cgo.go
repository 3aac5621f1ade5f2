//go:build cgo && linux

package store

// #include <malloc.h>
import "C"

// With cgo, Pebble allocates its block cache and memtables with C malloc. glibc's defaults
// suit it badly: a memtable freed after a flush raises the dynamic mmap threshold, so the
// next 16 MiB memtables come from the heap arenas and freed ones stay mapped, and each of up
// to 8×cores arenas keeps its own free memory. The resident set then creeps up with the
// amount of data written even though Pebble's live memory is bounded. A fixed threshold
// sends large allocations to mmap (returned to the system on free) and two arenas are
// plenty for Pebble's few allocating goroutines.
func init() {
	C.mallopt(C.M_MMAP_THRESHOLD, 128<<10)
	C.mallopt(C.M_ARENA_MAX, 2)
}

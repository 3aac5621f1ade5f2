//go:build race

package focuseval

// raceEnabled: the race detector slows crawls several times over.
const raceEnabled = true

//go:build !race

package focuseval

const raceEnabled = false

//go:build !race

package exteval

const raceEnabled = false

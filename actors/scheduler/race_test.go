//go:build race

package scheduler

// raceDetector is true when the tests run under -race, which makes the 30,000-pod
// decisions about ten times slower: those run in make unit's pass without -race.
const raceDetector = true

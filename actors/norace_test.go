//go:build !race

package actors

// raceDetector is true when the tests run under -race (race_test.go).
const raceDetector = false

//go:build race

package actors

// raceDetector is true when the tests run under -race. Two cluster members in one
// process race inside protoactor's remote (each remote.Start sets grpc's global
// logger while the other member's gRPC server logs), so those tests run in make
// unit's pass without -race.
const raceDetector = true

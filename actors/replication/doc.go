// Package replication decides, as pure functions of values, what a ReplicationController
// does with the pods it selects: create, delete, adopt, release, and the status to write.
// Expectations keep a pod from being created twice between syncs. It does no I/O, reads
// no clock, draws no randomness of its own and logs nothing; the RC actor applies plans.
package replication

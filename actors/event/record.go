package event

import (
	"encoding/hex"
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Record is one occurrence of something worth telling about an object.
type Record struct {
	Involved corev1.ObjectReference
	Source   corev1.EventSource
	Type     string // corev1.EventTypeNormal or corev1.EventTypeWarning
	Reason   string
	Message  string
	At       metav1.Time
	// Combined marks a record standing for similar events (see Aggregator): its
	// event is keyed without the message, so every combined occurrence bumps one event.
	Combined bool
	// Count is how many occurrences the record stands for (0 means 1): a recorder
	// that held back identical occurrences sends them as one record.
	Count int32
}

// Occurrences is how many occurrences the record stands for, at least 1.
func (r Record) Occurrences() int32 { return max(r.Count, 1) }

// similarKey identifies records of one source about one object with one type and
// reason: the events that may be combined.
func (r Record) similarKey() string {
	o := r.Involved
	return strings.Join([]string{
		r.Source.Component, r.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, o.FieldPath,
		r.Type, r.Reason,
	}, "\x00")
}

// Key identifies the event a record counts towards: records with one key are
// aggregated into one Event object (as Kubernetes' getEventKey, and without the
// message for combined records).
func (r Record) Key() string {
	if r.Combined {
		return r.similarKey()
	}
	return r.similarKey() + "\x00" + r.Message
}

// Name is the event's metadata.name: "<involved name>.<16 hex digits>", the digits
// a hash of the key, so that the same occurrence always names the same event.
func (r Record) Name() string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(r.Key()))
	return r.Involved.Name + "." + hex.EncodeToString(h.Sum(nil))
}

// Namespace is where the event lives: the involved object's namespace, or default
// for a cluster-scoped object such as a node.
func (r Record) Namespace() string {
	if r.Involved.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return r.Involved.Namespace
}

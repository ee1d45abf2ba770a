package event

import (
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMessageBytes is the longest message the API server accepts; longer ones are
// cut to it.
const MaxMessageBytes = 4 * 1024

// Pending is what arrived for one event since its last write: records sharing one
// key, the latest of which is Last.
type Pending struct {
	Last  Record
	Count int32
	First metav1.Time
}

// Add counts one more record (of the pending key), for as many occurrences as it
// stands for.
func (p *Pending) Add(r Record) {
	if p.Count == 0 || r.At.Before(&p.First) {
		p.First = r.At
	}
	if p.Count == 0 || !r.At.Before(&p.Last.At) {
		p.Last = r
	}
	p.Count += r.Occurrences()
}

// Next is the event to store for cur (nil: none stored) after the pending records:
// a new event with their count and first and last times, or cur bumped by their
// count, with the latest message and involved resourceVersion. create tells which;
// a new event lacks only what the API server adds (uid, creationTimestamp).
func Next(cur *corev1.Event, p Pending) (next *corev1.Event, create bool) {
	r := p.Last
	if cur == nil {
		return &corev1.Event{
			TypeMeta:            metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
			ObjectMeta:          metav1.ObjectMeta{Name: r.Name(), Namespace: r.Namespace()},
			InvolvedObject:      r.Involved,
			Reason:              r.Reason,
			Message:             truncate(r.Message),
			Source:              r.Source,
			FirstTimestamp:      p.First,
			LastTimestamp:       r.At,
			Count:               p.Count,
			Type:                r.Type,
			ReportingController: r.Source.Component,
			ReportingInstance:   r.Source.Host,
		}, true
	}
	next = cur.DeepCopy()
	next.Count = max(cur.Count, 1) + p.Count
	if next.FirstTimestamp.IsZero() || p.First.Before(&next.FirstTimestamp) {
		next.FirstTimestamp = p.First
	}
	if !r.At.Before(&next.LastTimestamp) {
		next.LastTimestamp = r.At
		next.Message = truncate(r.Message)
		next.InvolvedObject.ResourceVersion = r.Involved.ResourceVersion
	}
	return next, false
}

// Expiry is when an event is deleted: ttl after it was last seen.
func Expiry(e *corev1.Event, ttl time.Duration) time.Time {
	last := e.LastTimestamp.Time
	if last.IsZero() {
		last = e.FirstTimestamp.Time
	}
	if last.IsZero() {
		last = e.CreationTimestamp.Time
	}
	return last.Add(ttl)
}

// truncate cuts a message to MaxMessageBytes on a rune boundary.
func truncate(msg string) string {
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	cut := MaxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

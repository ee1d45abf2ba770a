package persistence

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// TestUnmarshalObjectAgreesWithEncodingJSON: the fast decoder gives what
// encoding/json gives, and JSON it refuses is decoded by encoding/json.
func TestUnmarshalObjectAgreesWithEncodingJSON(t *testing.T) {
	full, _ := json.Marshal(pod("default", "web-1"))
	cm, _ := json.Marshal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v", "e": ""}})
	tests := []struct {
		name string
		js   []byte
		new  func() runtime.Object
	}{
		{"a full pod", full, func() runtime.Object { return &corev1.Pod{} }},
		{"a config map", cm, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"nulls and empties", []byte(`{"metadata":{"name":"n","labels":null,"annotations":{}},"spec":{"containers":[]}}`), func() runtime.Object { return &corev1.Pod{} }},
		{"timestamps: set, null, absent, another offset", []byte(`{"metadata":{"name":"n","creationTimestamp":"2026-11-26T12:00:00Z","deletionTimestamp":null},"status":{"startTime":"2026-11-26T14:00:00+02:00","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T12:00:01Z"}]}}`), func() runtime.Object { return &corev1.Pod{} }},
		{"a deletion timestamp", []byte(`{"metadata":{"name":"n","deletionTimestamp":"2026-11-26T12:00:00Z","deletionGracePeriodSeconds":30}}`), func() runtime.Object { return &corev1.Pod{} }},
		{"an unknown field", []byte(`{"metadata":{"name":"n"},"future":1}`), func() runtime.Object { return &corev1.Pod{} }},
		{"a duplicate name (fallback)", []byte(`{"metadata":{"name":"a","name":"b"}}`), func() runtime.Object { return &corev1.Pod{} }},
		{"another case (fallback)", []byte(`{"Metadata":{"Name":"a"}}`), func() runtime.Object { return &corev1.Pod{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := tc.new(), tc.new()
			if err := json.Unmarshal(tc.js, want); err != nil {
				t.Fatal(err)
			}
			if err := unmarshalObject(tc.js, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("decoded differently:\nencoding/json %#v\nunmarshalObject %#v", want, got)
			}
		})
	}
}

// TestUnmarshalObjectRefusesBadTimes: a timestamp encoding/json refuses is refused.
func TestUnmarshalObjectRefusesBadTimes(t *testing.T) {
	tests := []struct {
		name string
		js   string
	}{
		{"not RFC 3339", `{"metadata":{"name":"n","creationTimestamp":"yesterday"}}`},
		{"a number", `{"metadata":{"name":"n","creationTimestamp":5}}`},
		{"an object", `{"metadata":{"name":"n","creationTimestamp":{}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(tc.js), &corev1.Pod{}); err == nil {
				t.Fatal("encoding/json accepted it")
			}
			if err := unmarshalObject([]byte(tc.js), &corev1.Pod{}); err == nil {
				t.Error("unmarshalObject accepted it")
			}
		})
	}
}

// TestFastTimesDecodesWithoutFallback: timestamps do not send a pod to the slow path.
func TestFastTimesDecodesWithoutFallback(t *testing.T) {
	js := []byte(`{"metadata":{"name":"n","creationTimestamp":"2026-11-26T12:00:00Z","deletionTimestamp":null},"status":{"startTime":"2026-11-26T14:00:00+02:00"}}`)
	var p corev1.Pod
	if err := jsonv2.Unmarshal(js, &p, jsonv2.RejectUnknownMembers(true), fastTimes); err != nil {
		t.Fatalf("fast path refused: %v", err)
	}
	if want := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC); !p.Status.StartTime.Time.Equal(want) || !p.CreationTimestamp.Time.Equal(want) || p.DeletionTimestamp != nil {
		t.Errorf("decoded %v, %v, %v", p.CreationTimestamp, p.Status.StartTime, p.DeletionTimestamp)
	}
}

// TestUnmarshalObjectAgreesOnRandomObjects: randomly filled objects of the kinds with
// the most timestamps, encoded as the store encodes them, decode alike both ways.
func TestUnmarshalObjectAgreesOnRandomObjects(t *testing.T) {
	kinds := []struct {
		name string
		new  func() runtime.Object
	}{
		{"pod", func() runtime.Object { return &corev1.Pod{} }},
		{"node", func() runtime.Object { return &corev1.Node{} }},
		{"event", func() runtime.Object { return &corev1.Event{} }},
		{"replication controller", func() runtime.Object { return &corev1.ReplicationController{} }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			fill := randfill.NewWithSeed(int64(len(k.name))).NilChance(0.2).NumElements(0, 2)
			zone := time.FixedZone("east", 2*3600)
			compared := 0
			for i := range 200 {
				obj := k.new()
				fill.Fill(obj)
				// randfill leaves timestamps zero: set some, in two zones, or none.
				acc, err := meta.Accessor(obj)
				if err != nil {
					t.Fatal(err)
				}
				at := time.Unix(1700000000+int64(i)*7919, 0)
				switch i % 3 {
				case 1:
					acc.SetCreationTimestamp(metav1.NewTime(at.UTC()))
				case 2:
					acc.SetCreationTimestamp(metav1.NewTime(at.In(zone)))
					del := metav1.NewTime(at.Add(time.Minute))
					acc.SetDeletionTimestamp(&del)
				}
				js, err := json.Marshal(obj)
				if err != nil { // e.g. an IntOrString of a type that does not exist
					continue
				}
				want, got := k.new(), k.new()
				if err := json.Unmarshal(js, want); err != nil {
					continue // a random quantity encoding/json cannot read back
				}
				if err := unmarshalObject(js, got); err != nil {
					t.Fatalf("%s: %v", js, err)
				}
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("decoded differently:\n%s\nencoding/json %#v\nunmarshalObject %#v", js, want, got)
				}
				compared++
			}
			if compared < 100 {
				t.Fatalf("only %d of 200 random objects could be compared", compared)
			}
		})
	}
}

package persistence

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

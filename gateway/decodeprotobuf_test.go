package gateway

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/nodeagent/nodestatus"
)

// agreesWithSerializer decodes body as a fresh object of r both ways. Whatever the
// fast decoder accepts, the serializer must decode without error into an equal
// object; what it refuses it leaves reset. It reports whether the fast decoder took it.
func agreesWithSerializer(t *testing.T, r *kinds.Resource, body []byte) bool {
	t.Helper()
	want := kindOf(r)
	fast := r.New()
	if !decodeProtobufFast(body, want, fast) {
		if !reflect.DeepEqual(fast, r.New()) {
			t.Fatalf("a refused %s body left the object dirty: %#v", r.Kind, fast)
		}
		return false
	}
	fast.GetObjectKind().SetGroupVersionKind(want) // as decodeAs does
	slow := r.New()
	obj, gvk, err := protobufInfo.Serializer.Decode(body, &want, slow)
	if err != nil || obj != slow || gvk == nil || *gvk != want {
		t.Fatalf("the fast decoder took %q as a %s; the serializer says %v, %v", body, r.Kind, gvk, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q as a %s:\nfast       %#v\nserializer %#v", body, r.Kind, fast, slow)
	}
	return true
}

// protobufBody is obj as the serializer (and so client-go) encodes it.
func protobufBody(t testing.TB, obj runtime.Object) []byte {
	var buf bytes.Buffer
	if err := protobufInfo.Serializer.Encode(obj, &buf); err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return buf.Bytes()
}

// TestDecodeProtobufFastAgreesWithSerializer fills random objects of every served kind
// (randfill, seeded), encodes each as protobuf, and decodes it both ways; and the
// envelopes the fast decoder leaves to the serializer.
func TestDecodeProtobufFastAgreesWithSerializer(t *testing.T) {
	for _, r := range kinds.All() {
		if _, ok := r.New().(protobufMessage); !ok {
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			fill := randfill.NewWithSeed(int64(len(r.Name))).NilChance(0.2).NumElements(0, 3)
			for range 100 {
				obj := r.New()
				fill.Fill(obj)
				obj.GetObjectKind().SetGroupVersionKind(kindOf(r))
				if !agreesWithSerializer(t, r, protobufBody(t, obj)) {
					t.Fatalf("the fast decoder refused an encoded %s", r.Kind)
				}
			}
		})
	}
	node, _ := kinds.Lookup("nodes")
	clean := protobufBody(t, newHeartbeatNode())
	envelope := clean[len(protobufPrefix):]
	tests := []struct {
		name string
		body []byte
		take bool
	}{
		{name: "clean", body: clean, take: true},
		{name: "no kind nor version", body: append(append([]byte(nil), protobufPrefix...), 0x12, 0x00), take: true},
		{name: "no prefix", body: envelope},
		{name: "another kind", body: protobufBody(t, func() *corev1.Pod {
			p := newPod("p").obj()
			p.Kind, p.APIVersion = "Pod", "v1"
			return p
		}())},
		{name: "another version", body: protobufBody(t, func() *corev1.Node {
			n := newHeartbeatNode()
			n.APIVersion = "v2"
			return n
		}())},
		{name: "content encoding", body: append(append([]byte(nil), clean...), 0x1a, 0x04, 'g', 'z', 'i', 'p')},
		{name: "raw twice", body: append(append([]byte(nil), clean...), 0x12, 0x00)},
		{name: "unknown field", body: append(append([]byte(nil), clean...), 0x2a, 0x00)},
		{name: "truncated", body: clean[:len(clean)-3]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agreesWithSerializer(t, node, tc.body); got != tc.take {
				t.Errorf("fast decoder took it: %v, want %v", got, tc.take)
			}
		})
	}
}

// FuzzDecodeProtobufFast feeds arbitrary bytes to both decoders, as the kind picked by
// kind.
func FuzzDecodeProtobufFast(f *testing.F) {
	all := kinds.All()
	f.Add(protobufBody(f, newHeartbeatNode()), uint8(indexOf(all, "nodes")))
	f.Add(protobufBody(f, newPod("p").obj()), uint8(indexOf(all, "pods")))
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		r := all[int(kind)%len(all)]
		if _, ok := r.New().(protobufMessage); !ok {
			return
		}
		agreesWithSerializer(t, r, body)
	})
}

// newHeartbeatNode is a node as a simulated agent posts it.
func newHeartbeatNode() *corev1.Node {
	n := nodestatus.Registration(nodestatus.Info{Name: "n1", InternalIP: "127.0.0.2", Hostname: "n1",
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
		System:   corev1.NodeSystemInfo{KubeletVersion: "v1.0.0"}, DaemonPort: 10250},
		time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC))
	n.ResourceVersion = "42"
	return n
}

func indexOf(all []*kinds.Resource, name string) int {
	for i, r := range all {
		if r.Name == name {
			return i
		}
	}
	return 0
}

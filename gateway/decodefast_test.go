package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	"github.com/kubeactor/kubeactor/gateway/resource"
)

// agreesWithStrict decodes body as a fresh object of r both ways. Whatever the fast
// decoder accepts, the strict decoder must accept with no strict error (unknown or
// duplicate field), into an equal object. It reports whether the fast decoder took it.
func agreesWithStrict(t *testing.T, r *resource.Resource, body []byte) bool {
	t.Helper()
	fast := r.New()
	if !decodeFast(body, fast) {
		if !reflect.DeepEqual(fast, r.New()) {
			t.Fatalf("a refused %s body left the object dirty: %#v", r.Kind, fast)
		}
		return false
	}
	slow := r.New()
	strict, err := kjson.UnmarshalStrict(body, slow)
	if err != nil || len(strict) > 0 {
		t.Fatalf("the fast decoder took %s as a %s; the strict one says %v %v", body, r.Kind, err, strict)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s as a %s:\nfast   %#v\nstrict %#v", body, r.Kind, fast, slow)
	}
	return true
}

// TestDecodeFastAgreesWithStrict fills random objects of every served kind (randfill,
// seeded), encodes each as JSON, and decodes it both ways.
func TestDecodeFastAgreesWithStrict(t *testing.T) {
	for _, r := range resource.All() {
		t.Run(r.Name, func(t *testing.T) {
			fill := randfill.NewWithSeed(int64(len(r.Name))).NilChance(0.2).NumElements(0, 3)
			encoded, accepted := 0, 0
			for range 300 {
				obj := r.New()
				fill.Fill(obj)
				body, err := json.Marshal(obj)
				if err != nil { // e.g. an IntOrString of a type that does not exist
					continue
				}
				encoded++
				if agreesWithStrict(t, r, body) {
					accepted++
				}
			}
			// An object encoded from its own Go type has nothing to refuse: the fast
			// decoder takes (nearly) all of them, or it would not be the fast path.
			if accepted < encoded*9/10 {
				t.Fatalf("the fast decoder took %d of %d encoded %s objects", accepted, encoded, r.Kind)
			}
		})
	}
}

// FuzzDecodeFast feeds arbitrary JSON to both decoders, as the kind picked by kind.
func FuzzDecodeFast(f *testing.F) {
	for _, seed := range []string{
		podJSON("web"),
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","creationTimestamp":null,"labels":{"a":null}},"spec":{"containers":[]}}`,
		`{"kind":"Pod","metadata":{"name":"a","name":"b"}}`,
		`{"kind":"Pod","Metadata":{"name":"a"}}`,
		`{"kind":"Pod","spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"100m","memory":"1e3"}}}]}}`,
		`{"kind":"Service","spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81,"targetPort":8081}]}}`,
		`{"kind":"Secret","data":{"k":"aGVsbG8=","j":"aGVs\nbG8="},"stringData":{"s":"\u00e9\ud800"}}`,
		`{"kind":"ReplicationController","spec":{"replicas":1.0,"minReadySeconds":-0}}`,
		`{"kind":"Event","firstTimestamp":"2026-11-21T17:00:00Z","eventTime":"2026-11-21T17:00:00.123456Z","count":1e1}`,
		`{"kind":"Node","spec":{"podCIDR":"10.0.0.0/24","unschedulable":true,"taints":null}}`,
	} {
		for kind := range uint8(4) {
			f.Add([]byte(seed), kind)
		}
	}
	all := resource.All()
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		agreesWithStrict(t, all[int(kind)%len(all)], body)
	})
}
